import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'
import { openDatabase } from '../../src/storage/db.js'
import { parseConfig } from '../../src/ops/config.js'

// `studio keys autoreply PREFIX --subject S --body-file F [--reply-to ADDRESS]` and `… off`: stored, audited, kept by a
// rotation; bad input refused in one line, exit 2.
const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const db = await openDatabase(parseConfig({ ...dbEnv, STUDIO_DB_POOL: '1' }))
t.teardown(() => db.close())
const dir = mkdtempSync(join(tmpdir(), 'autoreply-'))
const BODY = 'Hello {{name}},\n\nthank you for writing about {{service}}.\n'
const bodyFile = join(dir, 'body.txt')
writeFileSync(bodyFile, BODY)
const autoreplyOf = async (prefix: string) =>
  (await db.sql`select autoreply_subject, autoreply_body, autoreply_reply_to from api_keys where prefix = ${prefix}`)[0]
const keyWith = async (scopes: string) => {
  const r = await cli(['keys', 'create', '--plan', 'FREE', '--scopes', scopes])
  if (r.code !== 0) throw new Error(r.err.join('\n'))
  return r.key.split('_')[1]
}

t.test('set, changed, off: stored, said, audited', async (t) => {
  const prefix = await keyWith('leads:write')
  const on = await cli(['keys', 'autoreply', prefix, '--subject', 'Thanks, {{name}}', '--body-file', bodyFile])
  t.equal(on.code, 0, on.err.join('\n'))
  t.same(on.out, [`key ${prefix}: autoreply on, subject "Thanks, {{name}}"`])
  t.same(await autoreplyOf(prefix), {
    autoreply_subject: 'Thanks, {{name}}',
    autoreply_body: BODY,
    autoreply_reply_to: null,
  })
  const args = ['--subject', 'We got it', '--body-file', bodyFile, '--reply-to', 'hello@shop.example']
  const changed = await cli(['keys', 'autoreply', prefix, ...args])
  t.same(changed.out, [`key ${prefix}: autoreply on, subject "We got it", reply to hello@shop.example`])
  const rotated = await cli(['keys', 'rotate', prefix])
  t.equal(rotated.code, 0, rotated.err.join('\n'))
  t.same(await autoreplyOf(rotated.key.split('_')[1]), {
    autoreply_subject: 'We got it',
    autoreply_body: BODY,
    autoreply_reply_to: 'hello@shop.example',
  })
  const off = await cli(['keys', 'autoreply', prefix, 'off'])
  t.same(off.out, [`key ${prefix}: autoreply off`])
  t.same(await autoreplyOf(prefix), { autoreply_subject: null, autoreply_body: null, autoreply_reply_to: null })
  t.equal((await cli(['keys', 'autoreply', prefix, 'off'])).code, 0)
  const entries = await db.sql<{ before: unknown; after: unknown }[]>`
    select before, after from audit_log where action = 'key.autoreply_changed' and target = ${prefix} order by at, id`
  t.same(
    entries,
    [
      {
        before: { subject: null, reply_to: null },
        after: { subject: 'Thanks, {{name}}', reply_to: null, body_changed: true },
      },
      {
        before: { subject: 'Thanks, {{name}}', reply_to: null },
        after: { subject: 'We got it', reply_to: 'hello@shop.example', body_changed: false },
      },
      {
        before: { subject: 'We got it', reply_to: 'hello@shop.example' },
        after: { subject: null, reply_to: null, body_changed: true },
      },
    ],
    'nothing changed, nothing recorded'
  )
})

t.test('refused in one line, exit 2, nothing changed', async (t) => {
  const prefix = await keyWith('leads:write')
  const empty = join(dir, 'empty')
  writeFileSync(empty, ' \n')
  const refusals: [string[], number, RegExp][] = [
    [['keys', 'autoreply', prefix], 2, /--subject and --body-file are needed/],
    [['keys', 'autoreply', prefix, '--subject', 'Hi'], 2, /--subject and --body-file are needed/],
    [['keys', 'autoreply', prefix, 'on'], 2, /STATE is off, not "on"/],
    [['keys', 'autoreply', prefix, 'off', '--subject', 'Hi'], 2, /off takes no/],
    [['keys', 'autoreply', prefix, '--subject', ' ', '--body-file', bodyFile], 2, /--subject: the subject is empty/],
    [['keys', 'autoreply', prefix, '--subject', 'a\nb', '--body-file', bodyFile], 2, /one line/],
    [['keys', 'autoreply', prefix, '--subject', 'x'.repeat(201), '--body-file', bodyFile], 2, /200 characters/],
    [['keys', 'autoreply', prefix, '--subject', 'Hi', '--body-file', join(dir, 'nope')], 2, /cannot read/],
    [['keys', 'autoreply', prefix, '--subject', 'Hi', '--body-file', empty], 2, /the body is empty/],
    [['keys', 'autoreply', prefix, '--subject', 'Hi', '--body-file', bodyFile, '--reply-to', 'nope'], 2, /Reply-To/],
    [
      ['keys', 'autoreply', await keyWith('completions:write'), '--subject', 'Hi', '--body-file', bodyFile],
      2,
      /leads:write/,
    ],
  ]
  for (const [args, code, message] of refusals) {
    const r = await cli(args)
    t.equal(r.code, code, args.join(' '))
    t.match(r.err[0], message)
  }
  t.same(await autoreplyOf(prefix), { autoreply_subject: null, autoreply_body: null, autoreply_reply_to: null })
})
