import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'
import { openDatabase } from '../../src/storage/db.js'
import { parseConfig } from '../../src/ops/config.js'

// `studio keys captcha PREFIX PROVIDER --secret-file F [--min-score N]` and `… none`: stored, the secret never
// printed or audited (only that it changed), kept by a rotation; bad input refused in one line.
const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const db = await openDatabase(parseConfig({ ...dbEnv, STUDIO_DB_POOL: '1' }))
t.teardown(() => db.close())
const dir = mkdtempSync(join(tmpdir(), 'captcha-'))
const SECRET = '0x4AAAAAAA-very-secret-captcha-key'
const secretFile = join(dir, 'secret')
writeFileSync(secretFile, `${SECRET}\n`)
const captchaOf = async (prefix: string) =>
  (await db.sql`select captcha_provider, captcha_secret, captcha_min_score from api_keys where prefix = ${prefix}`)[0]
const leadKey = async () => {
  const r = await cli(['keys', 'create', '--plan', 'FREE', '--scopes', 'leads:write', '--origins', 'https://a.example'])
  if (r.code !== 0) throw new Error(r.err.join('\n'))
  return r.key.split('_')[1]
}

t.test('set, changed, cleared: stored, said without the secret, audited without it', async (t) => {
  const prefix = await leadKey()
  const on = await cli(['keys', 'captcha', prefix, 'turnstile', '--secret-file', secretFile])
  t.equal(on.code, 0, on.err.join('\n'))
  t.same(on.out, [`key ${prefix}: captcha turnstile`])
  t.same(await captchaOf(prefix), { captcha_provider: 'turnstile', captcha_secret: SECRET, captcha_min_score: null })
  const v3 = await cli(['keys', 'captcha', prefix, 'recaptcha', '--secret-file', secretFile, '--min-score', '0.5'])
  t.equal(v3.code, 0, v3.err.join('\n'))
  t.same(v3.out, [`key ${prefix}: captcha recaptcha, minimum score 0.5`])
  const off = await cli(['keys', 'captcha', prefix, 'none'])
  t.same(off.out, [`key ${prefix}: captcha none`])
  t.same(await captchaOf(prefix), { captcha_provider: null, captcha_secret: null, captcha_min_score: null })
  t.notMatch([...on.out, ...on.err, ...v3.out, ...v3.err, ...off.out, ...off.err].join('\n'), SECRET)
  const entries = await db.sql<{ before: unknown; after: unknown }[]>`
    select before, after from audit_log where action = 'key.captcha_changed' and target = ${prefix} order by at, id`
  t.same(entries, [
    {
      before: { captcha: null, min_score: null },
      after: { captcha: 'turnstile', min_score: null, secret_changed: true },
    },
    {
      before: { captcha: 'turnstile', min_score: null },
      after: { captcha: 'recaptcha', min_score: 0.5, secret_changed: false },
    },
    {
      before: { captcha: 'recaptcha', min_score: 0.5 },
      after: { captcha: null, min_score: null, secret_changed: true },
    },
  ])
  const all = await db.sql`select before::text || after::text as v from audit_log`
  t.notMatch(all.map((r) => r.v).join('\n'), SECRET, 'no audit entry holds the secret')
  t.equal((await cli(['keys', 'captcha', prefix, 'none'])).code, 0)
  const n = await db.sql`select 1 from audit_log where action = 'key.captcha_changed' and target = ${prefix}`
  t.equal(n.length, 3, 'nothing changed, nothing recorded')
})

t.test('a rotated key keeps its CAPTCHA', async (t) => {
  const prefix = await leadKey()
  t.equal((await cli(['keys', 'captcha', prefix, 'hcaptcha', '--secret-file', secretFile])).code, 0)
  const rotated = await cli(['keys', 'rotate', prefix])
  t.equal(rotated.code, 0, rotated.err.join('\n'))
  t.same(await captchaOf(rotated.key.split('_')[1]), {
    captcha_provider: 'hcaptcha',
    captcha_secret: SECRET,
    captcha_min_score: null,
  })
})

t.test('refused in one line, exit 2, nothing changed', async (t) => {
  const prefix = await leadKey()
  const empty = join(dir, 'empty')
  writeFileSync(empty, '\n')
  const refusals: [string[], RegExp][] = [
    [['keys', 'captcha', prefix, 'recaptcha2'], /PROVIDER is turnstile, hcaptcha, recaptcha or none/],
    [['keys', 'captcha', prefix, 'turnstile'], /--secret-file is needed/],
    [['keys', 'captcha', prefix, 'turnstile', '--secret-file', join(dir, 'nope')], /--secret-file: cannot read/],
    [['keys', 'captcha', prefix, 'turnstile', '--secret-file', empty], /--secret-file: the secret is empty/],
    [['keys', 'captcha', prefix, 'turnstile', '--secret-file', secretFile, '--min-score', '0.5'], /for recaptcha/],
    [['keys', 'captcha', prefix, 'recaptcha', '--secret-file', secretFile, '--min-score', '2'], /from 0 to 1/],
    [['keys', 'captcha', prefix, 'none', '--secret-file', secretFile], /none takes no/],
  ]
  for (const [args, message] of refusals) {
    const r = await cli(args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.err[0], message)
  }
  t.same(await captchaOf(prefix), { captcha_provider: null, captcha_secret: null, captcha_min_score: null })
})
