import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseConfig } from '../../src/ops/config.js'
import { openDatabase } from '../../src/storage/db.js'
import { buildBundle } from '../support/bundle.js'
import { cliOn } from '../support/cli.js'
import { type DbEnv, emptyPostgres as emptyDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { startTestServer } from '../support/server.js'

// `studio backup` under a load of leads, and `studio restore` of that file into an empty embedded database and into
// an empty PostgreSQL: every lead acknowledged before the backup, and only leads the server stored; every user, key
// (still working), quota count, setting and endpoint: every row of every table. The source is this run's database
// (embedded, or PostgreSQL with DATABASE_URL: then the backup is pg_dump's).

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const dir = mkdtempSync(join(tmpdir(), 'studio-backup-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

// A new empty PostgreSQL database on the machine's server, dropped at the end.
const emptyPostgres = () => emptyDatabase(t, ADMIN_URL, 'studio_restore')
const emptyEmbedded = (): DbEnv => ({ STUDIO_DATA_DIR: mkdtempSync(join(dir, 'data-')) })

// Rows that move while the server runs, whatever a backup holds: its process's lease on the quota and the units it
// holds ahead (renewed as it runs), and when each key was last used (the load's requests move it).
const MOVING_TABLES = ['quota_processes', 'quota_holds', 'quota_key_holds']
const MOVING_COLUMNS: Record<string, string[]> = { api_keys: ['last_used_at'] }

// Every row of every table of the schema but those, as JSON, in a stable order; the leads and their events (which the
// load adds to) by id.
async function contents(env: DbEnv) {
  const db = await openDatabase({ ...parseConfig(env), STUDIO_DB_POOL: 1 })
  try {
    const rows = async (table: string) =>
      (await db.sql.unsafe(`select * from ${table}`))
        .map((r) => Object.entries(r).filter(([k]) => !MOVING_COLUMNS[table]?.includes(k)))
        .map((r) => JSON.stringify(Object.fromEntries(r)))
        .sort()
    const tables = await db.sql<{ name: string }[]>`
      select table_name as name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`
    const still: Record<string, string[]> = {}
    for (const { name } of tables)
      if (!['leads', 'events', ...MOVING_TABLES].includes(name)) still[name] = await rows(name)
    const byId = async (table: string) => new Map((await rows(table)).map((r) => [JSON.parse(r).id as string, r]))
    return { still, leads: await byId('leads'), events: await byId('events') }
  } finally {
    await db.close()
  }
}

const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
// The load is as fast as the server takes it: no rate limit in its way.
const s = await startTestServer(t, {
  ANTHROPIC_API_KEY: 'sk-ant-test',
  ANTHROPIC_BASE_URL: upstream.url,
  STUDIO_RATE_LIMIT: '1000000000',
})
const cli = cliOn(s.dbEnv)
// A key with limits of its own: its settings and its own count are in the backup too.
const limits = ['--rate-limit', '100000', '--monthly-completions', '50']
const ai = (await cli(['keys', 'create', '--email', 'ai@example.com', '--plan', 'PRO', '--key-name', 'ai', ...limits]))
  .key
const leadsKey = (await cli(['keys', 'create', '--email', 'leads@example.com', '--scopes', 'leads:write'])).key
// Setting up, before the first test: a failure throws.
const must = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`setting up: ${what}`)
}
must((await cli(['plan', 'set', '--email', 'leads@example.com', 'STARTER'])).code === 0, 'plan set')
must((await cli(['signin-link', '--email', 'leads@example.com'])).code === 0, 'signin-link')
// An endpoint for an event the load makes none of (its deliveries would move with the load).
const hook = ['--url', 'https://93.184.216.34/hook', '--events', 'key.revoked', '--description', 'crm']
must((await cli(['webhooks', 'add', '--email', 'ai@example.com', ...hook])).code === 0, 'webhooks add')
await s.db.sql`update users set lead_mail = false where email = 'leads@example.com'`
const hello = { messages: [{ role: 'user', content: 'Say hello' }] }
for (let i = 0; i < 3; i++)
  must((await s.fetch('/api/v1/ai/completions', { method: 'POST', key: ai, json: hello })).status === 200, 'an answer')
const counted = async (table: string) => (await s.db.sql.unsafe(`select sum(used)::int as n from ${table}`))[0].n
const recorded = async () => (await s.db.sql`select count(*)::int as n from completions`)[0].n
await eventually(async () => (await counted('quota_usage')) === 3 && (await counted('quota_key_usage')) === 3, {
  what: "the three completions counted in quota_usage and in the key's own count",
})
await eventually(async () => (await recorded()) === 3, { what: 'the three completions recorded (in batches)' })

// The load: four clients posting leads until told to stop; the ids the server acknowledged, and when.
const acknowledged: { id: string; at: number }[] = []
const statuses = new Map<number, number>()
let loading = true
const client = async (n: number) => {
  for (let i = 0; loading; i++) {
    const lead = { name: `L${n}-${i}`, email: `l${n}-${i}@example.com`, service: 'backup', message: 'under load' }
    const r = await s.fetch('/api/v1/leads', { method: 'POST', key: leadsKey, json: lead })
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
    if (r.status === 201) acknowledged.push({ id: ((await r.json()) as { id: string }).id, at: Date.now() })
  }
}
const load = [1, 2, 3, 4].map(client)
await eventually(() => acknowledged.length >= 20, { what: 'leads stored under load', timeout: 60_000 })
const file = join(dir, 'under-load.sql')
const startedAt = Date.now()
const taken = await cli(['backup', file])
const during = acknowledged.length
await eventually(() => acknowledged.length >= during + 10, { what: 'more leads after the backup', timeout: 60_000 })
loading = false
await Promise.all(load)
const before = acknowledged.filter((a) => a.at < startedAt).map((a) => a.id)
const source = await contents(s.dbEnv)

t.test('the backup is written while the server serves leads', async (t) => {
  t.same(taken, { code: 0, out: [`backup written to ${file}`], err: [], key: `backup written to ${file}` })
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by its owner only: it holds key hashes and webhook secrets')
  t.comment(`lead POSTs by status: ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.same(
    [...statuses.keys()].filter((status) => status !== 201 && status !== 503),
    [],
    'no error but a 503'
  )
})

t.test("the bundle's CLI, another process, makes one through the running server", async (t) => {
  const bin = await buildBundle(t)
  const out = join(dir, 'bundle.sql')
  const env = { PATH: process.env.PATH, LOG_LEVEL: 'error', ...s.dbEnv }
  const { stdout } = await new Promise<{ stdout: string }>((done, fail) =>
    execFile(process.execPath, [bin, 'backup', out], { env, cwd: dir }, (e, stdout) => (e ? fail(e) : done({ stdout })))
  )
  t.equal(stdout, `backup written to ${out}\n`)
  t.match(readFileSync(out, 'utf8'), /^INSERT INTO public\.api_keys /m)
})

for (const [kind, empty] of [
  ['embedded', emptyEmbedded],
  ['PostgreSQL', emptyPostgres],
] as const)
  t.test(`restored into an empty ${kind} database`, async (t) => {
    const target = await empty()
    const restored = await cliOn(target)(['restore', file])
    t.same(restored.err, [])
    t.equal(restored.code, 0)
    const got = await contents(target)
    t.same(Object.keys(got.still), Object.keys(source.still), 'the same tables')
    for (const [table, rows] of Object.entries(source.still)) t.same(got.still[table], rows, `${table}: every row`)
    t.ok(source.still.webhook_endpoints.length && source.still.quota_key_usage.length, 'settings and key counts')
    for (const id of before) t.ok(got.leads.has(id), `lead ${id}, acknowledged before the backup, is there`)
    for (const [id, row] of got.leads) t.equal(row, source.leads.get(id), `lead ${id} as the server stored it`)
    t.ok(got.leads.size < source.leads.size, 'leads stored after the backup are not in it')
    for (const [id, row] of got.events) t.equal(row, source.events.get(id))
    const created = [...got.events.values()].filter((r) => JSON.parse(r).type === 'lead.created')
    t.equal(created.length, got.leads.size, 'each lead with its lead.created event: one consistent moment')

    const again = await cliOn(target)(['restore', file])
    t.equal(again.code, 2, 'a database that is not empty is refused')
    t.match(again.err, [/^studio: the database is not empty \(\d+ tables, views or sequences\)/])
    t.equal(again.err.length, 1)

    const server = await startTestServer(t, {}, { dbEnv: target })
    const me = await server.fetch('/api/v1/me', { key: ai })
    t.equal(me.status, 200, 'the key works over the restored database')
    t.match(await me.json(), { user: { email: 'ai@example.com' }, plan: 'PRO', quota: { used: 3 } })
    const narrow = await server.fetch('/api/v1/me', { key: leadsKey })
    t.equal(narrow.status, 403, 'the other key is known, with its scopes (leads:write only)')
    const lead = { name: 'After', email: 'after@example.com', service: 'restore', message: 'new' }
    t.equal((await server.fetch('/api/v1/leads', { method: 'POST', key: leadsKey, json: lead })).status, 201)
  })

t.test('a stopped embedded database is backed up directly', async (t) => {
  const target = emptyEmbedded()
  t.equal((await cliOn(target)(['restore', file])).code, 0)
  const copy = join(dir, 'stopped.sql')
  t.equal((await cliOn(target)(['backup', copy])).code, 0)
  const again = emptyEmbedded()
  t.equal((await cliOn(again)(['restore', copy])).code, 0)
  t.same((await contents(again)).still, source.still)
})

t.test('clear errors', async (t) => {
  const missing = await cli(['backup'])
  t.equal(missing.code, 2)
  t.match(missing.err, [/^studio: expected 1 argument\(s\), got 0/, /^usage: studio /])
  const nowhere = await cli(['restore', join(dir, 'no-such-file.sql')])
  t.equal(nowhere.code, 2)
  t.match(nowhere.err, [/^studio: cannot read .*no-such-file\.sql: ENOENT/])
  const notSql = join(dir, 'not-a-backup.sql')
  writeFileSync(notSql, 'hello\n')
  t.match(await cli(['restore', notSql]), { code: 2, err: [/is not a backup in plain SQL/] })
  t.match(await cliOn(emptyEmbedded())(['backup', join(dir, 'x.sql')]), {
    code: 2,
    err: [/^studio: no embedded database in /],
  })
  const path = process.env.PATH
  process.env.PATH = '/nonexistent'
  const noPgDump = await cliOn(await emptyPostgres())(['backup', join(dir, 'y.sql')]).finally(() => {
    process.env.PATH = path
  })
  t.match(noPgDump, { code: 2, err: [/^studio: pg_dump is not installed: install PostgreSQL client tools/] })
  t.equal(noPgDump.err.length, 1)
})
