import t from 'tap'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'
import { openDatabase } from '../../src/storage/db.js'
import { parseConfig } from '../../src/ops/config.js'

// `studio keys form PREFIX on|off [--thank-you URL|none]`: a lead key opened to HTML forms, audited, kept by a
// rotation; refused for a key that could not sit in a page, and for a bad URL.
const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const db = await openDatabase(parseConfig({ ...dbEnv, STUDIO_DB_POOL: '1' }))
t.teardown(() => db.close())
const formOf = async (prefix: string) =>
  (
    await db.sql<{ form: boolean; thank_you_url: string | null }[]>`
      select form, thank_you_url from api_keys where prefix = ${prefix}`
  )[0]
const leadKey = async () => {
  const r = await cli(['keys', 'create', '--plan', 'FREE', '--scopes', 'leads:write', '--origins', 'https://a.example'])
  if (r.code !== 0) throw new Error(r.err.join('\n'))
  return r.key.split('_')[1]
}

t.test('on with a thank-you URL, then off: stored, said, audited', async (t) => {
  const prefix = await leadKey()
  t.same(await formOf(prefix), { form: false, thank_you_url: null }, 'off by default')
  const on = await cli(['keys', 'form', prefix, 'on', '--thank-you', 'https://a.example/thanks?x=1'])
  t.equal(on.code, 0, on.err.join('\n'))
  t.same(on.out, [`key ${prefix}: forms on, thank-you page https://a.example/thanks?x=1`])
  t.same(await formOf(prefix), { form: true, thank_you_url: 'https://a.example/thanks?x=1' })
  const off = await cli(['keys', 'form', prefix, 'off', '--thank-you', 'none'])
  t.equal(off.code, 0)
  t.same(off.out, [`key ${prefix}: forms off, thank-you page the service's own`])
  const entries = await db.sql<{ before: unknown; after: unknown }[]>`
    select before, after from audit_log where action = 'key.form_changed' and target = ${prefix} order by at, id`
  t.same(entries, [
    {
      before: { form: false, thank_you_url: null },
      after: { form: true, thank_you_url: 'https://a.example/thanks?x=1' },
    },
    {
      before: { form: true, thank_you_url: 'https://a.example/thanks?x=1' },
      after: { form: false, thank_you_url: null },
    },
  ])
  const again = await cli(['keys', 'form', prefix, 'off'])
  t.equal(again.code, 0)
  const n = await db.sql`select 1 from audit_log where action = 'key.form_changed' and target = ${prefix}`
  t.equal(n.length, 2, 'nothing changed, nothing recorded')
})

t.test('a rotated key keeps its form setting', async (t) => {
  const prefix = await leadKey()
  t.equal((await cli(['keys', 'form', prefix, 'on', '--thank-you', 'http://localhost:8080/ok'])).code, 0)
  const rotated = await cli(['keys', 'rotate', prefix])
  t.equal(rotated.code, 0, rotated.err.join('\n'))
  t.same(await formOf(rotated.key.split('_')[1]), { form: true, thank_you_url: 'http://localhost:8080/ok' })
})

t.test('refused in one line, exit 2, nothing changed', async (t) => {
  const prefix = await leadKey()
  const plain = await cli(['keys', 'create', '--plan', 'FREE'])
  const refusals: [string[], RegExp][] = [
    [['keys', 'form', plain.key.split('_')[1], 'on'], /not a lead key/],
    [['keys', 'form', prefix, 'maybe'], /STATE is on or off/],
    [['keys', 'form', prefix, 'on', '--thank-you', 'http://example.com/t'], /--thank-you: http is only for loopback/],
    [['keys', 'form', prefix, 'on', '--thank-you', 'javascript:alert(1)'], /--thank-you: not an http\(s\) URL/],
    [['keys', 'form', prefix, 'on', '--thank-you', 'https://u:p@a.example/'], /--thank-you: .*no user/],
  ]
  for (const [args, message] of refusals) {
    const r = await cli(args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.err[0], message)
  }
  t.same(await formOf(prefix), { form: false, thank_you_url: null })
  const missing = await cli(['keys', 'form', 'ZZZZZZZZZZZZ', 'on'])
  t.not(missing.code, 0)
})
