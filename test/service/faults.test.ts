import t, { type Test } from 'tap'
import { generateKey } from '../../src/accounts/key-format.js'
import { issueKey, startTestServer } from '../support/server.js'
import { havePostgres, privatePostgres } from '../support/pg.js'
import { eventually } from '../support/eventually.js'

// PostgreSQL stops under a running server: a PostgreSQL this test starts itself, never the machine's shared one.

if (!havePostgres) {
  t.pass('skipped: no PostgreSQL binaries on this machine')
} else {
  const pg = await privatePostgres(t)
  const s = await startTestServer(t, {}, { dbEnv: { DATABASE_URL: pg.url } })
  const sql = s.db.sql
  const key = await issueKey(sql, { email: 'fault@example.com' })
  const lead = { name: 'F', email: 'f@example.com', service: 's', message: 'm' }
  // No answer may hang: a request not answered in 10 s (five times what the issue allows) fails the test.
  const HANG = 10_000

  async function call(
    path: string,
    init: { key?: string; json?: unknown; method?: string; headers?: Record<string, string> } = {}
  ) {
    const started = performance.now()
    const r = await s.fetch(path, { ...init, signal: AbortSignal.timeout(HANG) })
    const text = await r.text()
    let body: any = null
    try {
      body = JSON.parse(text)
    } catch {}
    return { status: r.status, headers: r.headers, text, body, ms: performance.now() - started }
  }
  const postLead = () => call('/api/v1/leads', { method: 'POST', key, json: lead })
  const created: string[] = []

  const unavailable = (t: Test, r: Awaited<ReturnType<typeof call>>, what: string) => {
    t.equal(r.status, 503, what)
    t.equal(r.body.error?.code, 'service_unavailable', what)
    t.equal(r.headers.get('retry-after'), '2')
    t.notMatch(r.text, /select|insert|from |ECONN|stack|\bat \S+:\d+/i, 'no SQL, driver error or stack in the answer')
    t.comment(`${what}: ${r.status} in ${r.ms.toFixed(0)} ms`)
  }

  // Once PostgreSQL is back, the same server answers again without any help. A request may still meet a pool
  // connection on its way back (or a slow first query on a loaded machine): a lead is retried with one Idempotency-Key,
  // so the retries cannot store it twice.
  let retry = 0
  async function recovers(t: Test) {
    const until = <T>(ok: () => Promise<T>, what: string) => eventually(ok, { interval: 100, what })
    const ready = async () => (await call('/readyz')).status === 200
    t.ok(await until(ready, 'ready again'), 'ready again, by itself')
    t.ok(await until(async () => (await call('/api/v1/me', { key })).status === 200, 'GET /me'), 'GET /me again')
    const idem = `recover-${++retry}`
    const stored = async () => {
      const r = await call('/api/v1/leads', { method: 'POST', key, json: lead, headers: { 'idempotency-key': idem } })
      return r.status === 201 && r
    }
    const after = await until(stored, 'POST /leads')
    t.equal(after.status, 201, 'POST /leads again')
    created.push(after.body.id)
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from leads where idempotency_key = ${idem}`
    t.equal(n, 1, 'one lead for all the retries')
  }

  for (const mode of ['fast', 'immediate'] as const) {
    t.test(`PostgreSQL stops (${mode}) and comes back`, async (t) => {
      t.equal((await call('/readyz')).status, 200)
      // GET /me may answer from its one-second cache; a key of another account, verified but without a cached /me,
      // needs the database.
      const other = await issueKey(sql, { plan: 'PRO' })
      t.equal((await call('/api/v1/openapi.json', { key: other })).status, 200)
      const before = await postLead()
      t.equal(before.status, 201)
      created.push(before.body.id)

      // Leads in flight while it stops: each is a 201 (and then committed) or a 503.
      const inFlight = Array.from({ length: 20 }, (_, i) =>
        new Promise((r) => setTimeout(r, i * 5))
          .then(postLead)
          .catch((e: Error) => ({ status: 0, text: String(e), body: null }))
      )
      await pg.stop(mode)
      for (const r of await Promise.all(inFlight)) {
        t.ok(
          r.status === 201 || r.status === 503,
          `in flight: ${r.status} ${r.status === 201 || r.status === 503 ? '' : r.text}`
        )
        if (r.status === 201) created.push(r.body.id)
      }

      unavailable(t, await call('/api/v1/me', { key: other }), 'GET /me')
      unavailable(t, await postLead(), 'POST /leads')
      unavailable(t, await call('/api/v1/me', { key: generateKey().key }), 'a well-formed key not seen before')
      unavailable(t, await call('/readyz'), '/readyz')
      t.equal((await call('/api/v1/me', { key: 'studio_nope' })).status, 401, 'a malformed key needs no database')
      t.equal((await call('/healthz')).status, 200, 'the process is up')
      t.equal(
        (await call('/api/v1/openapi.json', { key })).status,
        200,
        'a cached key still reads what needs no database'
      )

      await pg.start()
      await recovers(t)
    })
  }

  t.test('PostgreSQL freezes (its connections stay open, nothing answers) and thaws', async (t) => {
    const other = await issueKey(sql, { plan: 'PRO' })
    t.equal((await call('/api/v1/openapi.json', { key: other })).status, 200)
    await pg.freeze()
    try {
      const [me, posted, ready, fresh] = await Promise.all([
        call('/api/v1/me', { key: other }),
        postLead(),
        call('/readyz'),
        call('/api/v1/me', { key: generateKey().key }),
      ])
      unavailable(t, me, 'GET /me, frozen')
      unavailable(t, posted, 'POST /leads, frozen')
      unavailable(t, ready, '/readyz, frozen')
      unavailable(t, fresh, 'a key not seen before, frozen')
      t.equal((await call('/healthz')).status, 200, 'the process is up')
    } finally {
      await pg.thaw()
    }
    await recovers(t)
  })

  t.test('a connection error that the driver leaves unawaited does not end the process', async (t) => {
    // What postgres.js does when a connection dies while it fetches the array types: a rejected promise nobody holds.
    void Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))
    const logged = () => s.log.lines.some((l) => /a driver promise nobody awaited/.test(l))
    await eventually(logged, { what: 'the rejection logged' })
    t.equal((await call('/healthz')).status, 200, 'still up')
    t.ok(logged(), 'and it was logged')
  })

  t.test('shutdown with PostgreSQL frozen still ends (the last_used_at flush is bounded)', async (t) => {
    const other = await startTestServer(t, {}, { dbEnv: { DATABASE_URL: pg.url } })
    t.equal((await other.fetch('/api/v1/me', { key })).status, 200, 'a key used, so a flush is pending')
    await pg.freeze()
    try {
      const hung = new Promise((r) => setTimeout(r, HANG, 'hung'))
      t.not(await Promise.race([other.close().then(() => 'closed'), hung]), 'hung', 'close() ends')
      t.match(other.log.lines.join('\n'), /last_used_at flush failed/, 'the failed flush is logged')
    } finally {
      await pg.thaw()
    }
    await recovers(t)
  })

  t.test('every lead answered 201 is committed', async (t) => {
    const rows = await sql<{ id: string }[]>`select id from leads where id = any(${created}::uuid[])`
    t.equal(rows.length, created.length, `${created.length} leads answered 201`)
    t.notOk(
      s.log.lines.some((l) => /"level":"error"/.test(l)),
      'no 500: the faults were recognised'
    )
    t.ok(
      s.log.lines.some((l) => /database unavailable/.test(l)),
      'the faults were logged'
    )
    const logged = s.log.lines.join('\n')
    t.notOk(logged.includes(key.split('_')[2]), 'without the key')
  })
}
