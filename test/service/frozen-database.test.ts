import t, { type Test } from 'tap'
import { issueKey, startTestServer } from '../support/server.js'
import { havePostgres, privatePostgres } from '../support/pg.js'
import { eventually } from '../support/eventually.js'

// The per-query deadline (STUDIO_DB_TIMEOUT_MS) holds on every path a request waits on: with PostgreSQL frozen
// (SIGSTOP: its connections stay open and nothing answers) under /me and /leads load, every request in flight is
// answered 503 while the database is still frozen, never held until it thaws. A PostgreSQL this test starts itself.

if (!havePostgres) {
  t.pass('skipped: no PostgreSQL binaries on this machine')
} else {
  const pg = await privatePostgres(t)
  // A small pool, all of it open before each freeze (a connection opened later would reach a backend not frozen).
  const POOL = 6
  // The load is one key's, faster than its rate limit.
  const env = { STUDIO_DB_POOL: String(POOL), STUDIO_RATE_LIMIT: '1000000' }
  const s = await startTestServer(t, env, { dbEnv: { DATABASE_URL: pg.url } })
  const { sql } = s.db
  const lead = { name: 'F', email: 'f@example.com', service: 's', message: 'm' }
  // Only a broken deadline waits this long: then the database thaws anyway, and the late answers fail the test.
  const SAFETY_CAP = 20_000

  interface Answer {
    status: number
    body: any
    retryAfter: string | null
    // Whether the answer arrived while the database was still frozen.
    whileFrozen: boolean
  }
  let frozen = false
  async function call(path: string, key: string, init: { method?: string; json?: unknown } = {}): Promise<Answer> {
    const r = await s.fetch(path, { ...init, key })
    const text = await r.text()
    let body: any = null
    try {
      body = JSON.parse(text)
    } catch {}
    return { status: r.status, body, retryAfter: r.headers.get('retry-after'), whileFrozen: frozen }
  }
  const me = (key: string) => call('/api/v1/me', key)
  const postLead = (key: string) => call('/api/v1/leads', key, { method: 'POST', json: lead })

  // Requests sent in a loop until `stop`, as load: answers of any kind (those in flight at the freeze are the test's).
  function load(send: () => Promise<Answer>) {
    let running = true
    const loop = (async () => {
      const answers: Answer[] = []
      while (running) answers.push(await send().catch(() => ({ status: 0 }) as Answer))
      return answers
    })()
    return async () => {
      running = false
      return loop
    }
  }

  async function answersWhileFrozen(t: Test, which: 'all' | 'backends') {
    const busy = await issueKey(sql, { email: `busy-${which}@example.com` })
    t.equal((await me(busy)).status, 200, 'the load key works')
    // Keys never used (so neither the key nor the account's /me is cached): each needs the database.
    const fresh = await Promise.all([1, 2, 3, 4, 5].map((i) => issueKey(sql, { email: `fresh-${which}-${i}@e.com` })))
    const loads = [load(() => me(busy)), load(() => postLead(busy)), load(() => postLead(busy))]
    await eventually(async () => (await me(busy)).status === 200, { what: 'load running' })

    await Promise.all(Array.from({ length: POOL }, () => sql`select pg_sleep(0.1)`))
    await pg.freeze(which)
    frozen = true
    const thawed = new Promise<void>((resume) => setTimeout(resume, SAFETY_CAP))
    const inFlight = Promise.all([...fresh.map(me), ...fresh.map(() => postLead(busy))])
    await Promise.race([inFlight, thawed])
    frozen = false
    await pg.thaw()

    const answers = await inFlight
    t.equal(answers.length, 10)
    for (const [i, a] of answers.entries()) {
      const what = i < 5 ? `GET /me with a key not seen before (${i})` : `POST /leads (${i - 5})`
      t.ok(a.whileFrozen, `${what}: answered while the database was frozen`)
      t.equal(a.status, 503, `${what}: 503`)
      t.equal(a.body?.error?.code, 'service_unavailable', `${what}: the error body`)
      t.equal(a.retryAfter, '2', `${what}: Retry-After`)
    }
    const loaded = (await Promise.all(loads.map((stop) => stop()))).flat()
    const broken = loaded.filter((a) => a.status === 0 || (a.status >= 500 && a.status !== 503))
    t.same(
      broken.map((a) => a.status),
      [],
      `the load's ${loaded.length} answers: each a success or a 503`
    )

    // Thawed, the same server serves again by itself.
    const until = <T>(ok: () => Promise<T>, what: string) => eventually(ok, { interval: 100, what })
    t.ok(await until(async () => (await me(fresh[0])).status === 200, 'GET /me'), 'GET /me again')
    t.ok(await until(async () => (await postLead(busy)).status === 201, 'POST /leads'), 'POST /leads again')
  }

  t.test('PostgreSQL backends frozen under load: every request in flight is a 503, then it serves again', (t) =>
    answersWhileFrozen(t, 'backends')
  )
  t.test('the postmaster frozen as well: the same', (t) => answersWhileFrozen(t, 'all'))
}
