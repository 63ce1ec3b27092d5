import type { Transport } from '../ops/transport.js'
import type { Logger } from '../ops/log.js'
import { type Sql, withTimeout } from '../storage/db.js'
import { batched } from './batched.js'
import {
  backlog,
  type Claimed,
  claimDue,
  type Delivered,
  finishAttempt,
  finishDelivered,
  type RenderEndpointMail,
  prune,
  releaseClaims,
} from './deliveries.js'
import { createLane, type Lane, type LaneSpec } from './lane.js'
import { outcomeOf } from './outcome.js'
import { WAKE_CHANNEL } from '../outbox/event.js'
import { postWebhook } from './post.js'
import { REFUSED_PRIVATE } from './address.js'
import { signedHeaders } from './signature.js'
import { slackMessage } from './slack.js'

export interface WorkerOptions {
  sql: Sql
  // A connection for LISTEN (the pool without per-query deadlines).
  listen?: Sql
  dispatcher: Transport
  log: Logger
  clock: () => number
  timeoutMs: number
  userAgent: string
  onOutcome?: (outcome: string) => void
  random?: () => number
  pollMs?: number
  // The least time between two rounds of claims (so that under load one statement claims many deliveries).
  claimGapMs?: number
  concurrency?: number
  // Other kinds of delivery run by this worker (mail), woken and stopped with it.
  lanes?: LaneSpec<unknown>[]
  // With mail on, what the mail about an endpoint it disables says.
  renderDisabled?: RenderEndpointMail
  // Other old rows this worker deletes at each hourly prune (the audit log's, leads kept as spam, leads past their
  // account's retention).
  prunes?: ((now: Date) => Promise<unknown>)[]
  // The worker's LISTEN and first round wait for this and a poll more, at most 1 s (the server listening: neither a
  // start nor its first requests wait for them).
  after?: Promise<unknown>
}

export interface DeliveryWorker {
  wake(): void
  backlog(): { waiting: number; oldestSeconds: number }
  close(): Promise<void>
}

const PRUNE_EVERY_MS = 3_600_000
const BACKLOG_EVERY_MS = 5000
const CLOSE_MS = 2000
// How long a success waits for others to be written with it: a finishing statement costs PostgreSQL about a
// millisecond whatever its size (BENCHMARKS.md, "Cheap deliveries"), and a claim round's posts end together.
const FINISH_GATHER_MS = 20

// The backlog for the metrics, counted again at most every BACKLOG_EVERY_MS.
function backlogGauge(sql: Sql) {
  let value = { waiting: 0, oldestSeconds: 0 }
  let counted = Number.NEGATIVE_INFINITY
  return {
    value: () => value,
    async count(now: Date) {
      if (performance.now() - counted < BACKLOG_EVERY_MS) return
      value = await backlog(sql, now)
      counted = performance.now()
    },
  }
}

// With `after` (the server listening), the worker's first round and its LISTEN wait that long more (a poll, at most
// this), so that the first requests come before them.
const START_DELAY_MS = 1000

// True once `after` and then `delayMs` have passed (at once without `after`); false if `signal` aborts first.
function startsAfter(after: Promise<unknown> | undefined, delayMs: number, signal: AbortSignal): Promise<boolean> {
  if (!after) return Promise.resolve(!signal.aborted)
  return after.then(
    () =>
      new Promise<boolean>((ok) => {
        if (signal.aborted) return ok(false)
        const stop = () => {
          clearTimeout(timer)
          ok(false)
        }
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', stop)
          ok(true)
        }, delayMs)
        signal.addEventListener('abort', stop, { once: true })
      }),
    () => false
  )
}

// Delivers due webhooks until closed: claims up to `concurrency` at a time (each lane at most once per `claimGapMs`),
// wakes on NOTIFY (a new event), on `wake()` or every `pollMs`, and gives its claims back when closed. A claim's lease
// outlasts an attempt, so a process that dies holding it loses it within the lease (the attempt's timeout + 10 s).
// Successful attempts are written in batches (one statement for all that finished meanwhile); the backlog for the
// metrics is counted at most every 5 s.
export function startDeliveryWorker(o: WorkerOptions): DeliveryWorker {
  const { sql, log, clock } = o
  const random = o.random ?? Math.random
  const pollMs = o.pollMs ?? 1000
  const concurrency = o.concurrency ?? 16
  const claimGapMs = o.claimGapMs ?? 20
  const leaseMs = o.timeoutMs + 10_000
  const stop = new AbortController()
  const waiting = backlogGauge(sql)
  let lastPrune = 0
  let pruning: Promise<unknown> | null = null
  let lastTick = Number.NEGATIVE_INFINITY
  let nudge: () => void = () => {}
  let nudged = false
  const wake = () => {
    nudged = true
    nudge()
  }

  const writeDelivered = batched((done: Delivered[]) => finishDelivered(sql, done), FINISH_GATHER_MS)

  async function deliver(c: Claimed) {
    const at = new Date(clock())
    const timestamp = Math.floor(at.getTime() / 1000)
    // A Slack endpoint is sent the message made of the event; a standard one the envelope as it was written.
    const body = c.kind === 'slack' ? slackMessage(c.body) : c.body
    const headers = signedHeaders(c.secrets, c.eventId, timestamp, body)
    const post = { url: c.url, body, headers, userAgent: o.userAgent, timeoutMs: o.timeoutMs }
    const result = await postWebhook(o.dispatcher, { ...post, signal: stop.signal })
    if (stop.signal.aborted) return
    if (result.status === null && result.answer.startsWith(REFUSED_PRIVATE))
      log.warn(
        `webhook delivery ${REFUSED_PRIVATE}: the server delivers there only with STUDIO_WEBHOOKS_ALLOW_PRIVATE=true`,
        {
          event: c.eventId,
          endpoint: c.endpointId,
          why: result.answer.slice(REFUSED_PRIVATE.length + 2),
        }
      )
    const outcome = outcomeOf(c, result, at.getTime(), random)
    const attempt = { ...result, at }
    if (outcome.kind === 'delivered') await writeDelivered({ claim: c, attempt })
    else await finishAttempt(sql, c, attempt, outcome, o.renderDisabled)
    o.onOutcome?.(outcome.kind)
    log.debug('webhook attempt', {
      event: c.eventId,
      endpoint: c.endpointId,
      status: result.status,
      outcome: outcome.kind,
    })
  }

  const webhooks: LaneSpec<Claimed> = {
    concurrency,
    claim: (now, limit) => claimDue(sql, now, leaseMs, limit),
    run: deliver,
    release: (claims) => releaseClaims(sql, claims),
    prune: (now) => prune(sql, now),
    onError: (c, e) => log.error('webhook delivery failed', { event: c.eventId, err: String(e) }),
  }
  const lanes: Lane[] = [webhooks, ...(o.lanes ?? [])].map((spec) => createLane(spec, wake, stop.signal))

  async function tick() {
    const gap = lastTick + claimGapMs - performance.now()
    if (gap > 0) await new Promise((ok) => setTimeout(ok, gap))
    if (stop.signal.aborted) return false
    const now = new Date(clock())
    lastTick = performance.now()
    let more = false
    for (const lane of lanes) more = (await lane.tick(now)) || more
    await waiting.count(now)
    if (!pruning && now.getTime() - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = now.getTime()
      // Beside the deliveries, not in their way; close() waits for it.
      pruning = Promise.all([...lanes.map((lane) => lane.prune(now)), ...(o.prunes ?? []).map((p) => p(now))])
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

  const begun = startsAfter(o.after, Math.min(pollMs, START_DELAY_MS), stop.signal)
  const noListen = (e: unknown) => log.warn('webhook worker: no LISTEN, polling only', { err: String(e) })
  const listening = begun.then((go) => (go ? (o.listen ?? sql).listen(WAKE_CHANNEL, wake).catch(noListen) : null))
  const running = begun.then((go) => (go ? loop() : undefined))
  return {
    wake,
    backlog: waiting.value,
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
