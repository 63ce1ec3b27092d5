import cluster, { type Worker } from 'node:cluster'
import type { Config } from '../ops/config.js'
import type { Logger } from '../ops/log.js'

// STUDIO_WORKERS > 1: this process (the primary) forks that many workers, each a whole `studio serve` on the same
// port (node:cluster hands them the connections in turn). The primary serves nothing and opens no database.
// A worker listens once and closes only to stop: when the last worker closes a listener, a connection the primary
// handed it meanwhile stays in the primary, unanswered for good (Node 20's round_robin_handle.js).

// Why this configuration cannot run several workers, or null when it can.
export function workersProblem(config: Config): string | null {
  const n = config.STUDIO_WORKERS
  if (n <= 1) return null
  if (!config.DATABASE_URL)
    return `STUDIO_WORKERS=${n} needs DATABASE_URL: the embedded database serves one process (use STUDIO_WORKERS=1)`
  if (!config.STUDIO_REDIS_URL)
    return (
      `STUDIO_WORKERS=${n} needs STUDIO_REDIS_URL: ` +
      `each worker would keep its own rate limits, ${n} times the limit`
    )
  return null
}

// True in the primary of a multi-worker server: it should run `runPrimary` instead of serving.
export const isPrimary = (config: Config) => config.STUDIO_WORKERS > 1 && cluster.isPrimary

// A worker that dies is replaced; one that dies within this long of its start delays the next (doubling, up to 10 s).
const QUICK_DEATH_MS = 5000

// Forks the workers and keeps them at `n`. SIGTERM (or SIGINT) is passed to every worker, which drains as a single
// process does; resolves with 0 once all have exited (1 if any failed to), or 1 if no worker ever came up (2 when
// the first to exit refused to start with code 2: a database migrated by a newer release).
export function runPrimary(n: number, log: Logger): Promise<number> {
  const live = new Map<Worker, number>()
  let stopping = false
  let failure = 0
  let listened = false
  let quickDeaths = 0
  const fork = () => {
    if (stopping) return
    const worker = cluster.fork()
    live.set(worker, Date.now())
  }
  return new Promise((done) => {
    const stop = (signal: string) => {
      if (!stopping) log.info('shutting down workers', { signal, workers: live.size })
      stopping = true
      for (const worker of live.keys()) worker.process.kill('SIGTERM')
      if (live.size === 0) done(failure)
    }
    cluster.on('online', (worker) => log.info('worker started', { pid: worker.process.pid }))
    cluster.on('listening', () => (listened = true))
    cluster.on('exit', (worker, code, signal) => {
      const lived = Date.now() - (live.get(worker) ?? 0)
      live.delete(worker)
      if (stopping) {
        if (code !== 0) failure ||= 1
        if (live.size === 0) done(failure)
        return
      }
      if (!listened) {
        log.error('a worker exited before any worker listened; stopping', { pid: worker.process.pid, code, signal })
        failure = code === 2 ? 2 : 1
        return stop('worker failed to start')
      }
      quickDeaths = lived < QUICK_DEATH_MS ? quickDeaths + 1 : 0
      const delayMs = quickDeaths ? Math.min(100 * 2 ** quickDeaths, 10_000) : 0
      log.warn('worker died; starting another', { pid: worker.process.pid, code, signal, delayMs })
      setTimeout(fork, delayMs)
    })
    process.on('SIGTERM', stop)
    process.on('SIGINT', stop)
    log.info('starting workers', { workers: n, primary: process.pid })
    for (let i = 0; i < n; i++) fork()
  })
}
