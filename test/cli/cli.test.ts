import { readdirSync } from 'node:fs'
import t from 'tap'
import { SCOPES } from '../../src/accounts/scopes.js'
import { run } from '../../src/cli/cli.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { rootPath } from '../support/paths.js'
import { issuedKeys } from '../support/server.js'

const dbEnv = await testDatabase(t)

async function cli(args: string[], env: Record<string, string> = {}) {
  const out: string[] = []
  const err: string[] = []
  const code = await run(args, { ...dbEnv, ...env }, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out, err }
}

t.test('--help lists every command and setting', async (t) => {
  const { code, out } = await cli(['--help'])
  t.equal(code, 0)
  for (const word of [
    'serve',
    'migrate',
    'keys create',
    'keys list',
    'keys revoke',
    'keys scopes PREFIX --scopes S',
    '[--scopes S]',
    'plan set',
    'DATABASE_URL',
    'STUDIO_DATA_DIR',
    'LOG_LEVEL',
    'PORT',
  ]) {
    t.match(out.join('\n'), word)
  }
  t.match(out.join('\n'), `Scopes S: ${SCOPES.join(', ')} `, 'every scope by name')
})

t.test('bad arguments: a usage line and exit code 2', async (t) => {
  for (const args of [
    ['frobnicate'],
    ['keys'],
    ['keys', 'create'],
    ['keys', 'create', '--email', 'nope'],
    ['keys', 'create', '--email', 'a@b.co', '--plan', 'GOLD'],
    ['keys', 'create', '--email', 'a@b.co', '--role', 'king'],
    ['keys', 'create', '--bogus'],
    ['keys', 'revoke'],
    ['keys', 'revoke', 'x'],
    ['plan', 'set', 'PRO'],
    ['plan', 'set', '--email', 'a@b.co', 'GOLD'],
    ['migrate', 'extra'],
    ['migrate', '--dry-run=yes'],
    ['migrate', '--dryrun'],
    ['migrate', '--dry-run', 'extra'],
  ]) {
    const { code, err } = await cli(args)
    t.equal(code, 2, args.join(' '))
    t.match(err.at(-1), /^usage: studio /)
  }
})

t.test('a bad setting names the variable and exits 2', async (t) => {
  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'not a url'],
    ['STUDIO_QUOTA_FREE', '-1'],
  ]) {
    const { code, err } = await cli(['migrate'], { [name]: value })
    t.equal(code, 2)
    t.equal(err.length, 1)
    t.match(err[0], new RegExp(`^studio: invalid configuration: ${name}: `))
  }
})

t.test('migrate --dry-run lists what would run and changes nothing', async (t) => {
  const all = readdirSync(rootPath('sql'))
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
  const before = await cli(['migrate', '--dry-run'])
  t.equal(before.code, 0)
  t.same(before.out, ['would apply:', ...all])
  t.same((await cli(['migrate', '--dry-run'])).out, before.out, 'nothing was applied')
  t.same((await cli(['migrate'])).out, [`applied: ${all.join(', ')}`])
  t.same((await cli(['migrate', '--dry-run'])).out, ['up to date'])
})

t.test('keys, plans and migrations', async (t) => {
  const m = await cli(['migrate'])
  t.equal(m.code, 0)
  const created = await cli(['keys', 'create', '--email', 'Cli@Example.com', '--name', 'Cli', '--plan', 'PRO'])
  t.equal(created.code, 0)
  const key = created.out.at(-1)!
  issuedKeys.push(key)
  t.match(key, /^studio_[0-9A-Za-z]{12}_[0-9A-Za-z]{28}$/)
  const again = await cli(['keys', 'create', '--email', 'cli@example.com'])
  issuedKeys.push(again.out.at(-1)!)
  const accountOf = (out: string[]) => out[0].split(' ')[1]
  t.equal(accountOf(again.out), accountOf(created.out), 'the same user and account are reused')
  t.match(again.out[0], /plan PRO/)
  const lonely = await cli(['keys', 'create', '--plan', 'ENTERPRISE'])
  issuedKeys.push(lonely.out.at(-1)!)
  t.match(lonely.out[0], /plan ENTERPRISE\), no user/)

  const list = await cli(['keys', 'list'])
  t.equal(list.code, 0)
  const text = list.out.join('\n')
  for (const k of [key, again.out.at(-1)!, lonely.out.at(-1)!]) {
    t.match(text, k.split('_')[1])
    t.notMatch(text, k.split('_')[2], 'never the secret')
  }

  const prefix = key.split('_')[1]
  t.equal((await cli(['keys', 'revoke', prefix])).code, 0)
  t.match(
    (await cli(['keys', 'list'])).out.find((l) => l.startsWith(prefix)),
    new RegExp(`\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\t${SCOPES.join(',')}(\\t-){5}$`)
  )
  const missing = await cli(['keys', 'revoke', 'AAAAAAAAAAAA'])
  t.equal(missing.code, 1)

  const plan = await cli(['plan', 'set', '--email', 'cli@example.com', 'STARTER'])
  t.equal(plan.code, 0)
  t.match(plan.out[0], /now on plan STARTER/)
  t.equal((await cli(['plan', 'set', '--email', 'nobody@example.com', 'PRO'])).code, 1)
})

t.test('signin-link speaks of a mail only when one was queued, and only with mail on', async (t) => {
  const { sql } = await openTestDatabase(t, dbEnv)
  const mails = (to: string) => sql`select 1 from mail_deliveries where recipient = ${to}`
  const mail = { STUDIO_SMTP_URL: 'smtp://127.0.0.1:9', STUDIO_MAIL_FROM: 'studio@example.com' }
  const on = await cli(['signin-link', '--email', 'told@example.com'], mail)
  t.equal(on.code, 0, on.err.join('\n'))
  t.match(on.out[0], /sign in \(a mail with it is queued for them: the running server sends it\):$/)
  t.match(on.out.at(-1), /^http:\/\/.+\/dashboard\/link\/[\w-]+$/, 'the link alone on the last line')
  t.equal((await mails('told@example.com')).length, 1)
  const off = await cli(['signin-link', '--email', 'quiet@example.com'])
  t.equal(off.code, 0, off.err.join('\n'))
  t.match(off.out[0], /sign in:$/)
  t.notMatch(off.out.join('\n'), /mail/)
  t.equal((await mails('quiet@example.com')).length, 0)
})
