import { pruneAudit } from '../audit/log.js'
import { pruneRetention } from '../leads/retention.js'
import { pruneSpam } from '../leads/spam.js'
import type { Config } from '../ops/config.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import { version } from '../ops/version.js'
import type { Database } from '../storage/db.js'
import { createWebhookDispatcher } from './dispatcher.js'
import type { RenderEndpointMail } from './deliveries.js'
import { mailLane, type RenderAssignedMail, type RenderLeadMail } from './mail-lane.js'
import type { Mailer } from './mailer.js'
import { startDeliveryWorker, type WorkerOptions } from './worker.js'

export interface WebhooksDeps {
  db: Database
  config: Pick<Config, 'STUDIO_WEBHOOKS_ALLOW_PRIVATE' | 'STUDIO_WEBHOOKS_TIMEOUT_MS' | 'STUDIO_AUDIT_RETENTION_DAYS'>
  log: Logger
  metrics: Metrics
  clock: () => number
  // With mail on: the mailer, and how a lead's mail, an assignee's and a disabled endpoint's read (the dashboard's:
  // it knows the links).
  mail?: {
    mailer: Mailer
    renderLead: RenderLeadMail
    renderAssigned: RenderAssignedMail
    renderDisabled: RenderEndpointMail
  }
  // Tests: a dispatcher of their own, a fixed random, a shorter poll.
  options?: Partial<Pick<WorkerOptions, 'dispatcher' | 'random' | 'pollMs' | 'concurrency'>>
  // What the worker starts after (the server listening). Undici's chunks load at the first delivery.
  after?: Promise<unknown>
}

const OUTCOMES = ['delivered', 'retry', 'failed', 'disable'] as const

const onMail = (metrics: Metrics) =>
  metrics.counterBy(
    'studio_mail_attempts_total',
    'Mail delivery attempts, by outcome: delivered, retry (a temporary failure, tried again later) or failed ' +
      '(refused for good, or the schedule exhausted).',
    'outcome',
    ['delivered', 'retry', 'failed'] as const
  )

// The delivery worker of this process (webhooks, and mail when it is on), with its dispatcher and metrics; `close`
// stops it and gives its claims back (before the database closes). Its first round comes after `after` (the server
// listening) and a poll; undici loads at the first delivery, before its deadline starts (post.ts).
export function startWebhooks({ db, config, log, metrics, clock, mail, options = {}, after }: WebhooksDeps) {
  const dispatcher = options.dispatcher ?? createWebhookDispatcher(config.STUDIO_WEBHOOKS_ALLOW_PRIVATE)
  // Closed with the worker only when it is this process's own.
  const own = dispatcher === options.dispatcher ? undefined : dispatcher
  const onOutcome = metrics.counterBy(
    'studio_webhook_attempts_total',
    'Webhook delivery attempts, by outcome: delivered, retry (failed, tried again later), failed (the schedule ' +
      'exhausted) or disable (410 Gone, or 5 days of failures: the endpoint was disabled).',
    'outcome',
    OUTCOMES
  )
  const worker = startDeliveryWorker({
    ...options,
    sql: db.sql,
    listen: db.raw,
    dispatcher,
    log,
    clock,
    timeoutMs: config.STUDIO_WEBHOOKS_TIMEOUT_MS,
    userAgent: `Studio-Webhooks/${version}`,
    onOutcome,
    renderDisabled: mail?.renderDisabled,
    after,
    prunes: [
      (now) => pruneAudit(db.sql, now, config.STUDIO_AUDIT_RETENTION_DAYS),
      (now) => pruneSpam(db.sql, now),
      (now) => pruneRetention(db.sql, now),
    ],
    lanes: mail
      ? [
          mailLane({
            ...mail,
            sql: db.sql,
            log,
            clock,
            random: options.random ?? Math.random,
            onOutcome: onMail(metrics),
          }),
        ]
      : [],
  })
  metrics.gauge(
    'studio_webhook_deliveries_waiting',
    'Webhook deliveries not yet made (due or retrying).',
    () => worker.backlog().waiting
  )
  metrics.gauge(
    'studio_webhook_oldest_waiting_seconds',
    'Age of the oldest event with a delivery not yet made (0 when none).',
    () => worker.backlog().oldestSeconds
  )
  return {
    wake: worker.wake,
    async close() {
      await worker.close()
      await own?.close()
    },
  }
}
