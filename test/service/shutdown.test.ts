import t from 'tap'
import { parseConfig } from '../../src/ops/config.js'
import { openDatabase, type Sql } from '../../src/storage/db.js'
import { generateKey } from '../../src/accounts/key-format.js'
import { testDatabase } from '../support/database.js'
import { FROM_SOURCE, spawnServer } from '../support/processes.js'
import { issueKey, issuedKeys } from '../support/server.js'

// SIGTERM under load: the server (a process of its own) stops accepting, finishes what is in flight, flushes pending
// writes and exits 0; every lead answered 201 is in the database, and none that was not.

const dbEnv = await testDatabase(t)
const server = await spawnServer(
  t,
  // The load below is about shutdown, not the per-key rate limit (300 a minute by default), which a slow database
  // lets the requests in flight reach.
  { LOG_LEVEL: 'debug', STUDIO_SHUTDOWN_TIMEOUT_MS: '20000', STUDIO_RATE_LIMIT: '100000', ...dbEnv },
  { cli: FROM_SOURCE }
)
const { url, exited } = server

// In embedded mode the server owns the database and this process reaches it through its socket; after the server
// exits, this process opens the database itself.
async function withDb<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
  const db = await openDatabase(parseConfig({ ...dbEnv, STUDIO_DB_POOL: '1' }))
  try {
    return await fn(db.sql)
  } finally {
    await db.close()
  }
}

const key = await withDb((sql) => issueKey(sql, { email: 'term@example.com' }))
const prefix = key.split('_')[1]
const lead = { name: 'T', email: 't@example.com', service: 's', message: 'under load' }
const post = (headers: Record<string, string> = {}) =>
  fetch(`${url}/api/v1/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(lead),
  })

t.test('a varied workload before the load (its log is checked for keys below)', async (t) => {
  t.equal(
    (await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': key } })).status,
    200
  )
  t.equal((await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${generateKey().key}` } })).status, 401)
  t.equal(
    (
      await fetch(`${url}/api/v1/me?key=${key}`, {
        headers: { authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}` },
      })
    ).status,
    401
  )
  t.equal((await fetch(`${url}/api/v1/${key}`)).status, 404)
  t.equal((await post({ 'idempotency-key': key })).status, 201)
  t.equal(
    (
      await fetch(`${url}/api/v1/leads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: `{"name":"${key}",`,
      })
    ).status,
    422
  )
})

t.test('SIGTERM under load: in-flight requests finish, every 201 is stored, exit 0', async (t) => {
  const started = new Date(Date.now() - 1000)
  let ok = 0
  let refused = 0
  let signalled = false
  const outcomes: Promise<void>[] = []
  // Bursts of 8 requests every 5 ms, at most 800; SIGTERM once 60 have been answered 201, so that many are in flight.
  // What comes after is refused (connection refused or closed before an answer): never a 201 that is not stored, nor
  // a stored lead answered otherwise.
  for (let i = 0; i < 800 && !(signalled && !server.running()); i++) {
    if (i % 8 === 0) await new Promise((r) => setTimeout(r, 5))
    outcomes.push(
      post().then(
        async (r) => {
          await r.arrayBuffer()
          if (r.status === 201) ok++
          else t.equal(r.status, 503, 'an answer other than 201 says the service is going away')
          if (ok >= 60 && !signalled) {
            signalled = true
            void server.stop('SIGTERM')
          }
        },
        () => void refused++
      )
    )
  }
  await Promise.all(outcomes)
  t.ok(signalled, 'SIGTERM was sent mid-way')
  t.equal(await exited, 0, 'exit 0')
  t.comment(`${ok} answered 201, ${refused} refused`)
  t.ok(refused > 0, 'requests after SIGTERM were refused')
  const stored = await withDb(async (sql) => {
    const [{ n }] = await sql<
      { n: number }[]
    >`select count(*)::int as n from leads where message = 'under load' and idempotency_key is null`
    const [{ last_used_at }] = await sql<
      { last_used_at: Date | null }[]
    >`select last_used_at from api_keys where prefix = ${prefix}`
    return { n, lastUsed: last_used_at }
  })
  t.equal(stored.n, ok, 'the count of 201s equals the rows stored')
  t.ok(stored.lastUsed && stored.lastUsed >= started, 'the pending last_used_at was flushed on the way out')
  t.match(server.output(), /"msg":"shutting down"/)
})

t.test('the server process never logged a key', async (t) => {
  await exited
  const output = server.output()
  t.ok(output.length > 0)
  for (const k of issuedKeys) {
    t.notOk(output.includes(k), 'no key')
    t.notOk(output.includes(k.split('_')[2]), 'no secret')
  }
})
