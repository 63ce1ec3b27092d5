import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { createHttpServer } from './http/server.js'
import { createKeyStore } from './accounts/auth.js'
import { openOriginSet } from './accounts/origins.js'
import type { Config } from './ops/config.js'
import { deadlineError, openDatabase, type Database } from './storage/db.js'
import { guardDriverRejections } from './storage/driver-guard.js'
import type { Logger } from './ops/log.js'
import { createMetrics, type Metrics } from './ops/service-metrics.js'
import { serveMetrics } from './http/metrics-listener.js'
import { migrate } from './storage/migrate.js'
import { listenApi, urlOf } from './ops/listen.js'
import type { Transport } from './ops/transport.js'
import { createDispatcher } from './completions/dispatcher.js'
import { adaptersFor, createUpstreams } from './completions/fallback.js'
import { openLimiters } from './limits/limiters.js'
import { createQuota } from './quota/quota.js'
import { postgresStore } from './quota/postgres-store.js'
import { limitsByPlan } from './quota/plans.js'
import { createRecorder } from './completions/record-writer.js'
import { createBudgets } from './completions/budget.js'
import { createPrices } from './completions/prices.js'
import type { CallOptions } from './completions/call.js'
import { lazyDashboard } from './dashboard/lazy.js'
import type { DashboardDeps } from './dashboard/page.js'
import { startWebhooks, type WebhooksDeps } from './events/delivery-service.js'
import { createMailer } from './events/mailer.js'
import { assignedMail, autoreplyMail, disabledEndpointMail, leadMail } from './dashboard/mail.js'
import { mailIsOn } from './ops/config.js'
import { openTracer } from './ops/trace.js'
import { type BackupScheduleOptions, startBackups } from './storage/backup-schedule.js'
import { startSummary } from './ops/start-summary.js'
import { listenerRoutes } from './routes.js'
import { captchaVerifier } from './leads/captcha.js'
import { shutDown } from './shutdown.js'

export interface ServiceOptions {
  log: Logger
  clock?: () => number
  db?: Database
  dispatcher?: Transport
  backoff?: CallOptions['backoff']
  // A stream's ping interval (completions/sse-reply.ts), shortened by tests.
  pingMs?: number
  metrics?: Metrics
  webhooks?: WebhooksDeps['options']
  backups?: BackupScheduleOptions
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

const poolGauge = (metrics: Metrics, db: Database) =>
  metrics.gauge(
    'studio_db_pool_max_connections',
    'Connections the PostgreSQL pool may open (configured; the driver does not report how many are busy).',
    () => db.sql.options.max
  )

const QUOTA_TICK_MS = 50

interface QuotaOptions {
  log: Logger
  clock: () => number
  metrics: Metrics
  // This process's id in the quota's leases, which its budget holds share (sql/041).
  processId: string
}

async function openQuota(db: Database, config: Config, { log, clock, metrics, processId }: QuotaOptions) {
  const store = postgresStore(db.raw, {
    limits: limitsByPlan(config),
    leaseMs: config.STUDIO_QUOTA_LEASE_MS,
    processId,
  })
  const quota = createQuota({
    store,
    keyStore: store.keys,
    limits: config,
    log,
    clock,
    leaseMs: config.STUDIO_QUOTA_LEASE_MS,
    timeoutMs: config.STUDIO_DB_TIMEOUT_MS,
    deadlineError: () => deadlineError(config.STUDIO_DB_TIMEOUT_MS),
    onRefused: (code) => metrics.refused(code),
  })
  await quota.start()
  return quota
}

// With mail on: the mailer, and the renderers of the mails with links into the dashboard (null: none).
async function openMail(config: Config, log: Logger, dashboardUrl: () => string | null) {
  if (!mailIsOn(config)) return undefined
  const mailer = await createMailer(config)
  log.info('mail on', { smtp: mailer.server })
  return {
    mailer,
    renderLead: leadMail(dashboardUrl),
    renderAssigned: assignedMail(dashboardUrl),
    renderDisabled: disabledEndpointMail(dashboardUrl),
  }
}

// The dashboard, when it is on: its pages load at the first page request (dashboard/lazy.ts).
const dashboardPages = (deps: DashboardDeps, log: Logger) =>
  deps.config.STUDIO_DASHBOARD === 'on'
    ? lazyDashboard(async () => (await import('./dashboard/dashboard.js')).createDashboard(deps, log), log)
    : undefined

// The tests' database or a new pool, migrated. A failed migration, or a database a newer release migrated
// (NewerDatabaseError): the pool it opened is closed.
async function openMigrated(config: Config, { db: given, log }: ServiceOptions): Promise<Database> {
  const db = given ?? (await openDatabase(config))
  const applied = await migrate(db.sql).catch(async (e) => {
    if (!given) await db.close()
    throw e
  })
  if (applied.length) log.info('migrations applied', { applied })
  return db
}

export async function startService(config: Config, opts: ServiceOptions): Promise<Service> {
  const { log } = opts
  guardDriverRejections(log)
  // The upstream calls' dispatcher: the tests' own, or this process's (its undici chunk loads at the first call).
  const dispatcher = opts.dispatcher ?? createDispatcher()
  // The webhook worker starts once the server listens. Never settled when the start fails.
  let listened = () => {}
  const listening = new Promise<void>((ok) => (listened = ok))
  const db = await openMigrated(config, opts)
  const keys = createKeyStore(db.sql, log, { clock: opts.clock, deadlineMs: config.STUDIO_DB_TIMEOUT_MS })
  await keys.refresh()
  const origins = await openOriginSet(db.sql, keys, log)
  const processId = randomUUID()
  const recorder = createRecorder(db.raw, log, processId, { mail: mailIsOn(config) })
  const clock = opts.clock ?? Date.now
  const metrics = opts.metrics ?? createMetrics()
  const [quota, tracer] = await Promise.all([
    openQuota(db, config, { log, clock, metrics, processId }),
    openTracer(config, log),
  ])
  quota.run(QUOTA_TICK_MS)
  // A plan or a key's own cap changed: what this process holds ahead under the old one is given back.
  keys.onAccountChange(quota.drop)
  keys.onKeysChange((prefixes) => prefixes.forEach(quota.drop))
  const limits = await openLimiters(config, { log, metrics, clock })
  poolGauge(metrics, db)
  // Links in mails and on the dashboard start with STUDIO_PUBLIC_URL, else with the listener's URL once it listens.
  let publicUrl = config.STUDIO_PUBLIC_URL ?? ''
  const mail = await openMail(config, log, () => (config.STUDIO_DASHBOARD === 'on' ? publicUrl : null))
  const webhooks = startWebhooks({ db, config, log, metrics, clock, mail, options: opts.webhooks, after: listening })
  const upstreams = createUpstreams(adaptersFor(config), { clock, metrics })
  if (config.STUDIO_UPSTREAM.includes('echo'))
    log.warn('the echo upstream is on: completions are answered by echo, not by a model (STUDIO_UPSTREAM)', {
      upstreams: config.STUDIO_UPSTREAM.join(','),
    })
  const backups = startBackups(config, db, { log, metrics, ...opts.backups })
  const completions = {
    quota,
    upstreams,
    dispatcher,
    recorder,
    prices: createPrices(config),
    budgets: createBudgets(db.raw, processId, mailIsOn(config)),
    tokens: limits.tokens,
    log,
    metrics,
    timeoutMs: config.STUDIO_UPSTREAM_TIMEOUT_MS,
    backoff: opts.backoff,
    pingMs: opts.pingMs,
  }
  const routes = listenerRoutes({
    db,
    keys,
    completions,
    leads: {
      mail: mail !== undefined,
      wake: webhooks.wake,
      raw: db.raw,
      deadlineMs: config.STUDIO_DB_TIMEOUT_MS,
      autoreply: mail && { render: autoreplyMail, dailyLimit: config.STUDIO_AUTOREPLY_DAILY_LIMIT },
    },
    forms: { limiter: limits.limiter, addresses: limits.leadAddresses, bodyLimit: config.STUDIO_BODY_LIMIT },
    verifyCaptcha: captchaVerifier({ verifyUrl: config.STUDIO_CAPTCHA_VERIFY_URL }),
    readiness: () => ({ rate_limiter: limits.store(), upstreams: upstreams.states(), ...backups?.details() }),
  })
  const pages = dashboardPages({ sql: db.sql, config, clock, publicUrl: () => publicUrl }, log)
  const { server } = createHttpServer({ ...limits, config, keys, log, routes, metrics, pages, tracer, origins })
  await listenApi(server, config.PORT, config.HOST)
  listened()
  const url = urlOf(server, config.HOST)
  publicUrl ||= url
  const { port } = server.address() as AddressInfo
  log.info('listening', startSummary(config, { url, publicUrl, databaseMode: db.mode }))
  const metricsServer =
    config.STUDIO_METRICS_PORT === undefined
      ? null
      : await serveMetrics(metrics, config.STUDIO_METRICS_HOST, config.STUDIO_METRICS_PORT, log)
  let closing: Promise<void> | undefined
  return {
    url,
    port,
    db,
    metrics,
    metricsUrl: metricsServer?.url,
    close: () =>
      (closing ??= shutDown({
        server,
        log,
        timeoutMs: config.STUDIO_SHUTDOWN_TIMEOUT_MS,
        metricsServer,
        limits,
        pages,
        origins,
        quota,
        webhooks,
        mailer: mail?.mailer,
        keys,
        recorder,
        tracer,
        backups,
        dispatcher: opts.dispatcher ? undefined : dispatcher,
        db: opts.db ? undefined : db,
      })),
  }
}
