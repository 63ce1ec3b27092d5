import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { SCOPES } from '../../src/accounts/scopes.js'
import { parseConfig } from '../../src/ops/config.js'
import { openDatabase } from '../../src/storage/db.js'
import { migrate } from '../../src/storage/migrate.js'
import { cliOn } from '../support/cli.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

// Scopes from the command line: set at creation, shown by name, narrowed and never widened.
const dbEnv = await testDatabase(t)

const cli = cliOn(dbEnv)
const prefixOf = (key: string) => key.split('_')[1]
async function scopesListed(prefix: string) {
  const { out } = await cli(['keys', 'list'])
  const header = out[0].split('\t')
  const row = out.find((l) => l.startsWith(`${prefix}\t`))!.split('\t')
  return row[header.indexOf('SCOPES')]
}

t.test('keys create --scopes sets them; keys list shows them by name', async (t) => {
  const some = await cli(['keys', 'create', '--email', 'cli@example.com', '--scopes', 'leads:write, me:read'])
  t.equal(some.code, 0, some.err.join('\n'))
  t.equal(await scopesListed(prefixOf(some.key)), 'me:read,leads:write')
  const all = await cli(['keys', 'create', '--plan', 'FREE'])
  t.equal(await scopesListed(prefixOf(all.key)), SCOPES.join(','), 'every scope by default')
})

t.test('keys scopes narrows a key', async (t) => {
  const k = await cli(['keys', 'create', '--plan', 'FREE'])
  const r = await cli(['keys', 'scopes', prefixOf(k.key), '--scopes', 'me:read'])
  t.equal(r.code, 0)
  t.same(r.out, [`key ${prefixOf(k.key)} now has the scopes me:read`])
  t.equal(await scopesListed(prefixOf(k.key)), 'me:read')
  const same = await cli(['keys', 'scopes', prefixOf(k.key), '--scopes', 'me:read'])
  t.equal(same.code, 0, 'the same set again is no widening')
})

t.test('a wider set is refused with exit 2 and one line, and nothing changes', async (t) => {
  const k = await cli(['keys', 'create', '--plan', 'FREE', '--scopes', 'leads:write'])
  const r = await cli(['keys', 'scopes', prefixOf(k.key), '--scopes', 'leads:write,completions:write'])
  t.equal(r.code, 2)
  t.same(r.out, [])
  t.equal(r.err.length, 1)
  t.match(r.err[0], /lacks completions:write: scopes can be narrowed, never widened/)
  t.equal(await scopesListed(prefixOf(k.key)), 'leads:write')
})

t.test('unknown or missing scope names: exit 2 with the usage line', async (t) => {
  const k = await cli(['keys', 'create', '--plan', 'FREE'])
  for (const args of [
    ['keys', 'create', '--plan', 'FREE', '--scopes', 'me:write'],
    ['keys', 'create', '--plan', 'FREE', '--scopes', ''],
    ['keys', 'create', '--plan', 'FREE', '--scopes', ' , '],
    ['keys', 'scopes', prefixOf(k.key), '--scopes', 'admin'],
    ['keys', 'scopes', prefixOf(k.key)],
    ['keys', 'scopes', 'x', '--scopes', 'me:read'],
  ]) {
    const r = await cli(args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.err.at(-1), /^usage: studio /)
  }
  t.match((await cli(['keys', 'create', '--plan', 'FREE', '--scopes', 'me:write'])).err[0], /unknown scope me:write/)
  t.equal(await scopesListed(prefixOf(k.key)), SCOPES.join(','))
  const gone = await cli(['keys', 'scopes', 'AAAAAAAAAAAA', '--scopes', 'me:read'])
  t.equal(gone.code, 1)
  t.match(gone.err[0], /no key with prefix/)
})

t.test('a rotated key keeps its scopes', async (t) => {
  const k = await cli(['keys', 'create', '--plan', 'FREE', '--scopes', 'completions:write'])
  const rotated = await cli(['keys', 'rotate', prefixOf(k.key), '--grace', '0'])
  t.equal(await scopesListed(prefixOf(rotated.key)), 'completions:write')
})

// sql/023 gave them the scopes there were then; a scope added since is not theirs.
t.test('keys made before scopes existed keep the three there were', async (t) => {
  const db = await openDatabase(parseConfig(await testDatabase(t)))
  t.teardown(() => db.close())
  const dir = new URL('../../sql/', import.meta.url)
  const all = readdirSync(dir)
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(new URL(name, dir), 'utf8') }))
  const at = all.findIndex((m) => m.name.endsWith('_key_scopes.sql'))
  // The database as it was before scopes: a key made then.
  await migrate(db.sql, all.slice(0, at))
  const [{ id }] = await db.sql`insert into accounts (plan) values ('FREE') returning id`
  await db.sql`insert into api_keys (prefix, secret_sha256, account_id)
    values ('OLDKEY000001', ${Buffer.alloc(32)}, ${id})`
  t.same(
    await migrate(db.sql, all),
    all.slice(at).map((m) => m.name)
  )
  const [row] = await db.sql`select scopes from api_keys where prefix = 'OLDKEY000001'`
  t.same(row.scopes, ['me:read', 'leads:write', 'completions:write'])
})

t.test("the database checks no scope's name, only that a key has one", async (t) => {
  const { sql } = await openTestDatabase(t, dbEnv)
  const prefix = prefixOf((await cli(['keys', 'create', '--plan', 'FREE'])).key)
  await sql`update api_keys set scopes = '{me:read,leads:read}' where prefix = ${prefix}`
  t.equal(await scopesListed(prefix), 'me:read,leads:read', "a newer release's scope is stored as it is")
  await t.rejects(sql`update api_keys set scopes = '{}' where prefix = ${prefix}`, { code: '23514' }, 'none: refused')
  const [{ account_id }] = await sql`select account_id from api_keys where prefix = ${prefix}`
  await t.rejects(
    sql`insert into api_keys (prefix, secret_sha256, account_id) values ('NOSCOPES0001', ${Buffer.alloc(32)}, ${account_id})`,
    { code: '23502' },
    'a key inserted without its scopes: refused, not given a default'
  )
})
