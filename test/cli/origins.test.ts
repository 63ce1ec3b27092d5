import t from 'tap'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'
import { openDatabase } from '../../src/storage/db.js'
import { parseConfig } from '../../src/ops/config.js'

// `studio keys create --origins`: only for a key whose only scope is leads:write; origins normalised as stored.
const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const db = await openDatabase(parseConfig({ ...dbEnv, STUDIO_DB_POOL: '1' }))
t.teardown(() => db.close())
const originsOf = async (key: string) =>
  (await db.sql<{ origins: string[] | null }[]>`select origins from api_keys where prefix = ${key.split('_')[1]}`)[0]
    .origins

t.test('a leads:write key with origins: stored normalised, recorded in the audit log', async (t) => {
  const r = await cli([
    'keys',
    'create',
    '--email',
    'form@example.com',
    '--scopes',
    'leads:write',
    '--origins',
    'https://Example.com/,http://localhost:3000,https://example.com',
  ])
  t.equal(r.code, 0, r.err.join('\n'))
  t.same(await originsOf(r.key), ['https://example.com', 'http://localhost:3000'])
  const [entry] = await db.sql<{ after: { origins: string[] } }[]>`
    select after from audit_log where action = 'key.created' and target = ${r.key.split('_')[1]}`
  t.same(entry.after.origins, ['https://example.com', 'http://localhost:3000'])
  const plain = await cli(['keys', 'create', '--plan', 'FREE'])
  t.equal(await originsOf(plain.key), null, 'a key made without --origins has none')
})

t.test('a key with any other scope refuses --origins: one line, exit 2, no key made', async (t) => {
  const count = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from api_keys`)[0].n
  const before = await count()
  for (const scopes of [[], ['--scopes', 'leads:write,me:read'], ['--scopes', 'completions:write']]) {
    const r = await cli(['keys', 'create', '--plan', 'FREE', ...scopes, '--origins', 'https://example.com'])
    t.equal(r.code, 2, scopes.join(' '))
    t.same(r.out, [])
    t.equal(r.err.length, 1)
    t.match(r.err[0], /--origins: only a key whose only scope is leads:write may have origins/)
  }
  t.equal(await count(), before)
})

t.test('a malformed origin: exit 2 with the usage line', async (t) => {
  for (const bad of ['http://example.com', 'https://example.com/form', 'example.com', ',']) {
    const r = await cli(['keys', 'create', '--plan', 'FREE', '--scopes', 'leads:write', '--origins', bad])
    t.equal(r.code, 2, bad)
    t.match(r.err[0], /^studio: --origins: /)
    t.match(r.err.at(-1), /usage/i)
  }
})
