import type { AddressInfo } from 'node:net'
import { createApp, type Route } from './app.js'
import { createKeyStore } from './auth.js'
import type { Config } from './config.js'
import { openDatabase, type Database, type Sql } from './db.js'
import type { Logger } from './log.js'
import { createMetrics, serveMetrics, type Metrics } from './metrics.js'
import { migrate } from './migrate.js'
import { openApiRoute } from './openapi.js'
import { healthRoutes, leadsRoute, meRoute } from './routes.js'

export interface ServiceOptions {
  log: Logger
  clock?: () => number
  db?: Database
  metrics?: Metrics
}

export interface Service {
  url: string
  port: number
  db: Database
  metrics: Metrics
  // The /metrics listener's base URL, when STUDIO_METRICS_PORT is set.
  metricsUrl?: string
  close(): Promise<void>
}

export function apiRoutes(sql: Sql): Route[] {
  const api: Route[] = [meRoute(sql), leadsRoute(sql)]
  return [...api, openApiRoute(api)]
}

export async function startService(config: Config, opts: ServiceOptions): Promise<Service> {
  const { log } = opts
  const db = opts.db ?? (await openDatabase(config))
  const applied = await migrate(db.sql)
  if (applied.length) log.info('migrations applied', { applied })
  const keys = createKeyStore(db.sql, log, { clock: opts.clock })
  const routes = [...apiRoutes(db.sql), ...healthRoutes(db)]
  const metrics = opts.metrics ?? createMetrics()
  metrics.gauge('studio_db_pool_max_connections', 'Connections the PostgreSQL pool may open (configured; the driver does not report how many are busy).', () => db.sql.options.max)
  const { server } = createApp({ config, db, keys, log, routes, metrics })
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(config.PORT, config.HOST, ok))
  const { port } = server.address() as AddressInfo
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST
  log.info('listening', { url: `http://${host}:${port}`, database: db.mode })
  const metricsServer = config.STUDIO_METRICS_PORT === undefined ? null : await serveMetrics(metrics, config.STUDIO_METRICS_HOST, config.STUDIO_METRICS_PORT, log)
  let closing: Promise<void> | undefined
  return {
    url: `http://${host}:${port}`,
    port,
    db,
    metrics,
    metricsUrl: metricsServer?.url,
    close: () =>
      (closing ??= (async () => {
        await new Promise<void>((ok) => {
          server.close(() => ok())
          server.closeIdleConnections()
        })
        await metricsServer?.close()
        await keys.close()
        if (!opts.db) await db.close()
      })()),
  }
}
