import type { Server } from 'node:http'
import type { Logger } from './ops/log.js'

// A part the service stops: its `close` may finish at once or return a promise.
interface Closable {
  close(): unknown
}

// What a running service stops, in the order `shutDown` stops it.
export interface RunningParts {
  server: Server
  log: Logger
  // STUDIO_SHUTDOWN_TIMEOUT_MS: how long requests in flight may take before their connections are cut.
  timeoutMs: number
  metricsServer: Closable | null
  limits: Closable
  pages?: Closable
  origins: Closable
  quota: Closable & { settled(ms: number): Promise<unknown> }
  webhooks: Closable
  mailer?: Closable
  keys: Closable
  recorder: Closable
  tracer: Closable
  backups: Closable | null
  // Only when the service opened them itself (a test hands in its own).
  dispatcher?: Closable
  db?: Closable
}

const SETTLE_MS = 2000

// Stop accepting; let what is in flight finish (its connection closes as soon as it is idle), and after `timeoutMs`
// cut whatever is left.
function drain(server: Server, timeoutMs: number, log: Logger) {
  return new Promise<void>((ok) => {
    const idle = setInterval(() => server.closeIdleConnections(), 100)
    const force = setTimeout(() => {
      log.warn('shutdown timeout: closing connections still in use', { timeoutMs })
      server.closeAllConnections()
    }, timeoutMs)
    server.close(() => {
      clearInterval(idle)
      clearTimeout(force)
      ok()
    })
    server.closeIdleConnections()
  })
}

// The listener first, then what took requests beside it, then the parts the requests wrote through (their pending
// writes flushed), the database last.
export async function shutDown(parts: RunningParts): Promise<void> {
  await drain(parts.server, parts.timeoutMs, parts.log)
  await parts.metricsServer?.close()
  await parts.limits.close()
  parts.pages?.close()
  parts.origins.close()
  // Calls a forced close aborted still give their units back (bounded: their upstream calls are aborted).
  await parts.quota.settled(SETTLE_MS)
  // No request can make an event any more: the webhook worker stops and gives back what it had claimed.
  await parts.webhooks.close()
  parts.mailer?.close()
  const { keys, recorder, quota, tracer, backups } = parts
  await Promise.all([keys.close(), recorder.close(), quota.close(), tracer.close(), backups?.close()])
  await parts.dispatcher?.close()
  await parts.db?.close()
}
