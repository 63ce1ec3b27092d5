import type { AddressInfo } from 'node:net'
import { createApp, isDatabaseDown, type Route } from './app.js'
import { createKeyStore } from './auth.js'
import type { Config } from './config.js'
import { openDatabase, type Database, type Sql } from './db.js'
import type { Logger } from './log.js'
import { migrate } from './migrate.js'
import { openApiRoute } from './openapi.js'
import { healthRoutes, leadsRoute, meRoute } from './routes.js'

export interface ServiceOptions {
  log: Logger
  clock?: () => number
  db?: Database
}

export interface Service {
  url: string
  port: number
  db: Database
  close(): Promise<void>
}

export function apiRoutes(sql: Sql): Route[] {
  const api: Route[] = [meRoute(sql), leadsRoute(sql)]
  return [...api, openApiRoute(api)]
}

// postgres.js fetches the array types on every new connection and holds no handler on that query: a connection lost
// right then (PostgreSQL stopping) rejects a promise nobody awaits, and Node ends the process on it. Such a rejection
// only says the database is down (the requests that needed it got their own errors), so it is logged and dropped; any
// other unhandled rejection still ends the process, as by default.
let driverLog: Logger | undefined
function guardDriverRejections(log: Logger) {
  if (!driverLog) {
    process.on('unhandledRejection', (e) => {
      if (!isDatabaseDown(e)) throw e
      driverLog?.warn('database unavailable (a driver promise nobody awaited)', { err: String((e as Error).message) })
    })
  }
  driverLog = log
}

export async function startService(config: Config, opts: ServiceOptions): Promise<Service> {
  const { log } = opts
  guardDriverRejections(log)
  const db = opts.db ?? (await openDatabase(config))
  const applied = await migrate(db.sql)
  if (applied.length) log.info('migrations applied', { applied })
  const keys = createKeyStore(db.sql, log, { clock: opts.clock })
  const routes = [...apiRoutes(db.sql), ...healthRoutes(db)]
  const { server } = createApp({ config, db, keys, log, routes })
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(config.PORT, config.HOST, ok))
  const { port } = server.address() as AddressInfo
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST
  log.info('listening', { url: `http://${host}:${port}`, database: db.mode })
  let closing: Promise<void> | undefined
  return {
    url: `http://${host}:${port}`,
    port,
    db,
    close: () =>
      (closing ??= (async () => {
        // Stop accepting; let what is in flight finish (its connection closes as soon as it is idle), and after
        // STUDIO_SHUTDOWN_TIMEOUT_MS cut whatever is left. Then flush pending writes and close the database.
        await new Promise<void>((ok) => {
          const idle = setInterval(() => server.closeIdleConnections(), 100)
          const force = setTimeout(() => {
            log.warn('shutdown timeout: closing connections still in use', { timeoutMs: config.STUDIO_SHUTDOWN_TIMEOUT_MS })
            server.closeAllConnections()
          }, config.STUDIO_SHUTDOWN_TIMEOUT_MS)
          server.close(() => (clearInterval(idle), clearTimeout(force), ok()))
          server.closeIdleConnections()
        })
        await keys.close()
        if (!opts.db) await db.close()
      })()),
  }
}
