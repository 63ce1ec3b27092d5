import type { Dispatcher } from 'undici'
import type { Logger } from '../ops/log.js'
import { type Sql, withTimeout } from '../storage/db.js'
import { backlog, type Claimed, claimDue, finishAttempt, prune, releaseClaims } from './deliveries.js'
import { createLane, type Lane, type LaneSpec } from './lane.js'
import { outcomeOf } from './outcome.js'
import { WAKE_CHANNEL } from './outbox.js'
import { postWebhook } from './post.js'
import { signedHeaders } from './signature.js'
import { slackMessage } from './slack.js'

export interface WorkerOptions {
  sql: Sql
  // A connection for LISTEN (the pool without per-query deadlines).
  listen?: Sql
  dispatcher: Dispatcher
  log: Logger
  clock: () => number
  timeoutMs: number
  userAgent: string
  onOutcome?: (outcome: string) => void
  random?: () => number
  pollMs?: number
  concurrency?: number
  // Other kinds of delivery run by this worker (mail), woken and stopped with it.
  lanes?: LaneSpec<unknown>[]
}

export interface DeliveryWorker {
  wake(): void
  backlog(): { waiting: number; oldestSeconds: number }
  close(): Promise<void>
}

const PRUNE_EVERY_MS = 3_600_000
const CLOSE_MS = 2000

// Delivers due webhooks until closed: claims up to `concurrency` at a time, wakes on NOTIFY (a new event) or every
// `pollMs`, and gives its claims back when closed. A claim's lease outlasts an attempt, so a process that dies holding
// it loses it within the lease (the attempt's timeout + 10 s).
export function startDeliveryWorker(o: WorkerOptions): DeliveryWorker {
  const { sql, log, clock } = o
  const random = o.random ?? Math.random
  const pollMs = o.pollMs ?? 1000
  const concurrency = o.concurrency ?? 16
  const leaseMs = o.timeoutMs + 10_000
  const stop = new AbortController()
  let waiting = { waiting: 0, oldestSeconds: 0 }
  let lastPrune = 0
  let pruning: Promise<unknown> | null = null
  let nudge: () => void = () => {}
  let nudged = false
  const wake = () => {
    nudged = true
    nudge()
  }

  async function deliver(c: Claimed) {
    const at = new Date(clock())
    const timestamp = Math.floor(at.getTime() / 1000)
    // A Slack endpoint is sent the message made of the event; a standard one the envelope as it was written.
    const body = c.kind === 'slack' ? slackMessage(c.body) : c.body
    const headers = signedHeaders(c.secrets, c.eventId, timestamp, body)
    const post = { url: c.url, body, headers, userAgent: o.userAgent, timeoutMs: o.timeoutMs }
    const result = await postWebhook(o.dispatcher, { ...post, signal: stop.signal })
    if (stop.signal.aborted) return
    const outcome = outcomeOf(c, result, at.getTime(), random)
    await finishAttempt(sql, c, { ...result, at }, outcome)
    o.onOutcome?.(outcome.kind)
    log.debug('webhook attempt', {
      event: c.eventId,
      endpoint: c.endpointId,
      status: result.status,
      outcome: outcome.kind,
    })
  }

  const webhooks: LaneSpec<Claimed> = {
    name: 'webhook',
    concurrency,
    claim: (now, limit) => claimDue(sql, now, leaseMs, limit),
    run: deliver,
    release: (claims) => releaseClaims(sql, claims),
    prune: (now) => prune(sql, now),
    onError: (c, e) => log.error('webhook delivery failed', { event: c.eventId, err: String(e) }),
  }
  const lanes: Lane[] = [webhooks, ...(o.lanes ?? [])].map((spec) => createLane(spec, wake))

  async function tick() {
    const now = new Date(clock())
    let more = false
    for (const lane of lanes) more = (await lane.tick(now)) || more
    waiting = await backlog(sql, now)
    if (!pruning && now.getTime() - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = now.getTime()
      // Beside the deliveries, not in their way; close() waits for it.
      pruning = Promise.all(lanes.map((lane) => lane.prune(now)))
        .catch((e) => log.warn('webhook log prune', { err: String(e) }))
        .finally(() => (pruning = null))
    }
    return more
  }

  async function loop() {
    while (!stop.signal.aborted) {
      nudged = false
      const more = await tick().catch((e) => {
        log.warn('webhook worker', { err: String(e) })
        return false
      })
      if (more || nudged || stop.signal.aborted) continue
      await new Promise<void>((ok) => {
        const timer = setTimeout(ok, pollMs)
        nudge = () => {
          clearTimeout(timer)
          ok()
        }
      })
      nudge = () => {}
    }
  }

  const listening = (o.listen ?? sql).listen(WAKE_CHANNEL, wake).catch((e) => {
    log.warn('webhook worker: no LISTEN, polling only', { err: String(e) })
    return null
  })
  const running = loop()
  return {
    wake,
    backlog: () => waiting,
    // Bounded: with the database down or frozen, the claims lapse by themselves and the pool is closed anyway.
    async close() {
      stop.abort()
      wake()
      const stopped = (async () => {
        await running
        await Promise.all(lanes.map((lane) => lane.drain()))
        await pruning
        await (await listening)?.unlisten()
      })()
      await withTimeout(stopped, CLOSE_MS).catch((e) =>
        log.warn('webhook worker: stopped uncleanly', { err: String(e) })
      )
    },
  }
}
