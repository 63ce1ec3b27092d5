// The scaling-out part of `npm run bench`: GET /me with the Redis rate limiter against the in-memory one (servers
// pinned like the rest of the bench), and STUDIO_WORKERS=2 against one process (servers and load unpinned: on 2 cores
// the load generator competes with the workers, so the ratio is a floor, not the scaling factor). Uses the Redis in
// BENCH_REDIS_URL, else a redis-server of its own.
import { spawn, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'

const pings = (port) =>
  new Promise((ok) => {
    const s = connect(port, '127.0.0.1')
    const done = (v) => {
      s.destroy()
      ok(v)
    }
    s.setTimeout(1000, () => done(false))
    s.once('error', () => done(false))
    s.once('connect', () => s.write('PING\r\n'))
    s.once('data', (d) => done(d.toString().startsWith('+PONG')))
  })

// BENCH_REDIS_URL, else a redis-server of the bench's own on the load generator's core (it stands for a Redis on
// another machine: not on the measured server's core), else the machine's on 6379.
async function redisUrl(c) {
  if (process.env.BENCH_REDIS_URL) return { url: process.env.BENCH_REDIS_URL, where: 'BENCH_REDIS_URL' }
  if (spawnSync('redis-server', ['--version']).status !== 0)
    return (await pings(6379)) ? { url: 'redis://127.0.0.1:6379', where: 'the machine’s, unpinned' } : null
  const port = await c.freePort()
  const [cmd, args] = c.pin(1, 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', ''])
  c.children.push(spawn(cmd, args, { stdio: 'ignore' }))
  for (let i = 0; i < 100 && !(await pings(port)); i++) await new Promise((r) => setTimeout(r, 50))
  return { url: `redis://127.0.0.1:${port}`, where: c.pinned ? 'own, on the load’s core' : 'own' }
}

// The boot id of whichever process answers a request on a fresh connection.
const bootOf = (url) =>
  new Promise((ok) => {
    const req = request(`${url}/healthz`, { agent: false }, (res) => {
      res.resume()
      ok(String(res.headers['x-request-id']).split('-')[0])
    })
    req.once('error', () => ok(null))
    req.end()
  })

async function serve(c, env, pinned) {
  const port = await c.freePort()
  const args = ['dist/studio.mjs', 'serve']
  const child = pinned
    ? c.start(0, args, { ...env, PORT: String(port) })
    : spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: 'ignore' })
  c.children.push(child)
  const url = `http://127.0.0.1:${port}`
  await c.waitHealthy(url)
  const workers = Number(env.STUDIO_WORKERS ?? 1)
  const seen = new Set()
  for (let i = 0; i < 200 && seen.size < workers; i++) seen.add(await bootOf(url))
  return {
    url,
    stop: () => {
      child.kill('SIGTERM')
      return new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r()))
    },
  }
}

function unpinnedLoad(c, opts) {
  const file = join(c.work, 'load-scale.json')
  writeFileSync(file, JSON.stringify({ seconds: c.SECONDS, ...opts }))
  const r = spawnSync(process.execPath, ['bench/load.mjs', `@${file}`], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  })
  if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').at(-1))
}

// Interleaved rounds of `a` and `b`; returns the median requests/s of each and the non-200 statuses seen.
function compare(c, a, b, run) {
  const ra = []
  const rb = []
  for (let i = 0; i < c.ROUNDS; i++) {
    ra.push(run(a))
    rb.push(run(b))
  }
  const bad = (rs) => [...new Set(rs.flatMap((r) => Object.keys(r.statuses).filter((s) => s !== '200')))]
  const [badA, badB] = [bad(ra), bad(rb)]
  const note = `${badA.length ? `; non-200 (first): ${badA}` : ''}${badB.length ? `; non-200 (second): ${badB}` : ''}`
  return { a: c.median(ra.map((r) => r.rps)), b: c.median(rb.map((r) => r.rps)), note }
}

// c: { studioEnv, keys, ROUNDS, SECONDS, work, children, cores, pinned, start, pin, load, freePort, waitHealthy,
//      median, row, fmt, log }
export async function measureScale(c) {
  const redis = await redisUrl(c)
  if (!redis?.url) {
    c.row('GET /me, Redis limiter vs in memory', 'n/a', '', null, 'no Redis (set BENCH_REDIS_URL)')
    return null
  }
  const prefix = `studio-bench:${process.pid}:`
  const shared = { ...c.studioEnv, STUDIO_REDIS_URL: redis.url, STUDIO_REDIS_PREFIX: prefix }
  const me = (url) => ({ url: `${url}/api/v1/me`, keys: c.keys, connections: 20 })

  c.log('GET /me: Redis limiter vs in-memory limiter…')
  const viaRedis = await serve(c, shared, true)
  const inMemory = await serve(c, c.studioEnv, true)
  const limiter = compare(c, viaRedis.url, inMemory.url, (url) => c.load(me(url)))
  await Promise.all([viaRedis.stop(), inMemory.stop()])
  const limiterRatio = limiter.a / limiter.b
  c.row(
    'GET /me req/s, Redis limiter vs in memory',
    c.fmt(limiter.a, 0),
    c.fmt(limiter.b, 0),
    limiterRatio,
    `target ≥ 0.60; Redis: ${redis.where}${limiter.note}`
  )

  const result = { limiterRatio, workersRatio: null }
  if (!c.studioEnv.DATABASE_URL) {
    c.row('GET /me req/s, STUDIO_WORKERS=2 vs 1', 'n/a', '', null, 'needs DATABASE_URL (embedded: one process)')
    return result
  }
  c.log('GET /me: STUDIO_WORKERS=2 vs one process (unpinned)…')
  const two = await serve(c, { ...shared, STUDIO_WORKERS: '2' }, false)
  const one = await serve(c, shared, false)
  const workers = compare(c, two.url, one.url, (url) => unpinnedLoad(c, me(url)))
  await Promise.all([two.stop(), one.stop()])
  result.workersRatio = workers.a / workers.b
  c.row(
    'GET /me req/s, STUDIO_WORKERS=2 vs 1',
    c.fmt(workers.a, 0),
    c.fmt(workers.b, 0),
    result.workersRatio,
    `both on Redis; servers and load unpinned on ${c.cores} cores: a floor${workers.note}`
  )
  return result
}
