import { execFile } from 'node:child_process'
import { request } from 'node:http'
import { promisify } from 'node:util'
import t from 'tap'
import { buildBundle } from '../support/bundle.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { spawnServer } from '../support/processes.js'
import { issueKey } from '../support/server.js'
import { havePostgres, privatePostgres } from '../support/pg.js'
import { redisSkip, testRedis, uniquePrefix } from '../support/redis.js'
import { eventually } from '../support/eventually.js'
import { freePort } from '../support/ports.js'

// STUDIO_WORKERS=2: one port, two worker processes, a dead worker replaced, SIGTERM drains them all; every
// connection made during a start answered; and the configurations that must refuse to start. Over PostgreSQL (a private one when DATABASE_URL is unset: the
// embedded database serves one process).

const execFileP = promisify(execFile)
const skip = redisSkip(t) || (!process.env.DATABASE_URL && !havePostgres ? 'no PostgreSQL: set DATABASE_URL' : false)

// Built once for the whole file (the helper removes it when the test that built it ends).
const bin = await buildBundle(t)

// One request on a connection of its own (so that the cluster may hand it to either worker).
function call(url: string, path: string, key: string, body?: unknown) {
  return new Promise<{ status: number; id: string; json: any }>((ok, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = request(
      url + path,
      {
        agent: false,
        method: payload ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () =>
          ok({ status: res.statusCode ?? 0, id: String(res.headers['x-request-id']), json: JSON.parse(text || 'null') })
        )
      }
    )
    req.once('error', fail)
    req.end(payload)
  })
}

// The boot id that prefixes a process's own request ids: which worker answered.
const bootOf = (requestId: string) => requestId.split('-')[0]
const lines = (output: string, msg: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === msg)

const until = (check: () => boolean, what: string) => eventually(check, { timeout: 30_000, interval: 100, what })

t.test('two workers on one port', { skip }, async (t) => {
  const dbEnv = process.env.DATABASE_URL ? await testDatabase(t) : { DATABASE_URL: (await privatePostgres(t)).url }
  const db = await openTestDatabase(t, dbEnv)
  const key = await issueKey(db.sql, { email: 'workers@example.com' })
  const server = await spawnServer(t, {
    ...dbEnv,
    STUDIO_WORKERS: '2',
    STUDIO_REDIS_URL: await testRedis(t),
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    STUDIO_REDIS_TIMEOUT_MS: '1000',
    STUDIO_DB_TIMEOUT_MS: '60000',
    STUDIO_RATE_LIMIT: '100000',
    STUDIO_SHUTDOWN_TIMEOUT_MS: '20000',
    LOG_LEVEL: 'info',
  })
  await until(() => lines(server.output(), 'listening').length === 2, 'both workers listening')
  const listening = lines(server.output(), 'listening')
  t.equal(listening[0].url, listening[1].url, 'one port')
  t.not(listening[0].pid, listening[1].pid, 'two processes')

  const bootsOf = async (n: number) => {
    const answers = await Promise.all(Array.from({ length: n }, () => call(server.url, '/api/v1/me', key)))
    t.same(new Set(answers.map((a) => a.status)), new Set([200]), 'all answered 200')
    return new Set(answers.map((a) => bootOf(a.id)))
  }
  const before = await bootsOf(20)
  t.equal(before.size, 2, 'both workers answer')

  const started = lines(server.output(), 'worker started').map((l) => l.pid)
  t.equal(started.length, 2)
  process.kill(started[0], 'SIGKILL')
  await until(() => lines(server.output(), 'listening').length === 3, 'a replacement worker listening')
  t.equal(lines(server.output(), 'worker died; starting another').length, 1, 'the death is logged')
  const after = await bootsOf(20)
  t.equal(after.size, 2, 'two workers answer again')
  t.equal([...after].filter((b) => !before.has(b)).length, 1, 'one of them new')

  // SIGTERM under load: every lead answered 201 is stored; the primary exits 0 once both workers drained.
  const acknowledged: string[] = []
  const refused: number[] = []
  let stopped = false
  const lead = { name: 'W', email: 'w@example.com', service: 's', message: 'under load' }
  const loops = Array.from({ length: 8 }, async () => {
    while (!stopped) {
      const r = await call(server.url, '/api/v1/leads', key, lead).catch(() => null)
      if (!r) break
      if (r.status === 201) acknowledged.push(r.json.id)
      else refused.push(r.status)
    }
  })
  await until(() => acknowledged.length >= 50, 'leads under load')
  const exit = server.stop('SIGTERM')
  const code = await exit
  stopped = true
  await Promise.all(loops)
  t.equal(code, 0, 'the primary exits 0')
  t.same(refused, [], 'nothing but 201 was answered')
  t.equal(lines(server.output(), 'shutting down').length, 2, 'both workers drained')
  const stored = await db.sql`select id from leads where id = any(${acknowledged}::uuid[])`
  t.equal(stored.length, acknowledged.length, `every acknowledged lead stored (${acknowledged.length})`)
})

// GET /healthz on a connection of its own: the status, the error a connection gets while nothing listens
// (ECONNREFUSED, ECONNRESET), or 'no answer' when none came within 20 s (a guard against a hang, not a measure).
function healthz(port: number) {
  return new Promise<{ status: number | string; boot?: string }>((ok) => {
    const guard = setTimeout(() => {
      req.destroy()
      ok({ status: 'no answer' })
    }, 20_000)
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume()
      res.once('end', () => {
        clearTimeout(guard)
        ok({ status: res.statusCode ?? 0, boot: bootOf(String(res.headers['x-request-id'])) })
      })
    })
    req.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(guard)
      ok({ status: e.code ?? e.message })
    })
    req.end()
  })
}

// On a fixed PORT (as a deployment runs it): requests from the moment the primary is spawned, each on a fresh
// connection, until both workers have answered. A connection the primary accepts while the workers start must reach
// one of them, not stay in the primary unanswered.
t.test('every connection made while the workers start is answered', { skip }, async (t) => {
  const dbEnv = process.env.DATABASE_URL ? await testDatabase(t) : { DATABASE_URL: (await privatePostgres(t)).url }
  const redis = await testRedis(t)
  for (let start = 1; start <= 5; start++) {
    const port = await freePort()
    const statuses = new Map<number | string, number>()
    const boots = new Set<string>()
    let failed = false
    // A guard against a worker that never comes up, not a measure.
    const giveUp = Date.now() + 60_000
    const poll = async () => {
      while (boots.size < 2 && !statuses.has('no answer') && !failed && Date.now() < giveUp) {
        const { status, boot } = await healthz(port)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        if (boot) boots.add(boot)
        else await new Promise((ok) => setTimeout(ok, 2))
      }
    }
    const polling = Promise.all(Array.from({ length: 4 }, poll))
    const server = await spawnServer(t, {
      ...dbEnv,
      PORT: String(port),
      HOST: '127.0.0.1',
      STUDIO_WORKERS: '2',
      STUDIO_REDIS_URL: redis,
      STUDIO_REDIS_PREFIX: uniquePrefix(),
      LOG_LEVEL: 'info',
    }).catch((e) => {
      failed = true
      throw e
    })
    await polling
    const answered = t.notOk(statuses.has('no answer'), `start ${start}: every request answered`, {
      statuses: Object.fromEntries(statuses),
    })
    // Otherwise a worker may be stuck in its start, deaf to SIGTERM: the teardown kills the server.
    if (!t.equal(boots.size, 2, `start ${start}: both workers answered`) || !answered) return
    t.equal(await server.stop('SIGTERM'), 0, `start ${start}: the primary exits 0`)
  }
})

t.test('the configurations that cannot run several workers refuse to start', async (t) => {
  const refuse = async (env: Record<string, string>) => {
    const r = await execFileP(process.execPath, [bin, 'serve'], {
      env: { PATH: process.env.PATH, PORT: '0', ...env },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e
    )
    t.equal(r.code, 2, 'exit 2')
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line')
    return r.stderr
  }
  t.match(
    await refuse({ STUDIO_WORKERS: '2', DATABASE_URL: 'postgres://127.0.0.1:1/x' }),
    /^studio: STUDIO_WORKERS=2 needs STUDIO_REDIS_URL: /
  )
  t.match(
    await refuse({ STUDIO_WORKERS: '2', STUDIO_REDIS_URL: 'redis://127.0.0.1:1' }),
    /^studio: STUDIO_WORKERS=2 needs DATABASE_URL: the embedded database serves one process/
  )
  t.match(await refuse({ STUDIO_WORKERS: 'many' }), /^studio: invalid configuration: STUDIO_WORKERS: /)
})
