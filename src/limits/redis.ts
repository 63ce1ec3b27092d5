import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import { applying, type RateLimiter, SlidingWindow, type Verdict } from './limits.js'
import { type MergeScript, replay } from './redis-replay.js'
import { FORMAT, MAX_BATCH, MERGE_SCRIPT, SETTLE_SCRIPT, TOKENS_SCRIPT, WINDOW_SCRIPT } from './redis-script.js'
import { type TokenHold, type TokenLimiter, type TokenVerdict, TokenWindow } from './tokens.js'

// {ok, count, resetMs} per key of the batch, flat.
type Reply = number[]
interface WindowScript {
  studioWindow(keys: number, ...args: string[][]): Promise<Reply>
  studioTokens(keys: 1, key: string, ...args: string[]): Promise<Reply>
  studioSettle(keys: 1, key: string, ...args: string[]): Promise<number>
}

// While in fallback, how often Redis is asked whether it answers again.
const PROBE_MS = 250

export interface RedisLimitsOptions {
  url: string
  timeoutMs: number
  prefix: string
  // The in-memory windows: their limits are used, and they decide while Redis fails or is slow.
  requests: SlidingWindow
  authFailures: SlidingWindow
  // The tokens-per-minute window in memory, as `requests` is the request rate's (one of its own when not given).
  tokens?: TokenWindow
  log: Logger
  metrics: Metrics
}

export interface RedisLimits {
  limiter: RateLimiter
  authFailures: RateLimiter
  tokens: TokenLimiter
  // True while Redis fails or is slow and this process limits on its own.
  fallingBack(): boolean
  close(): Promise<void>
}

// A hold settled once: a second settlement does nothing.
function once(hold: TokenHold): TokenHold {
  let settled = false
  return {
    tokens: hold.tokens,
    settle(used) {
      if (settled) return
      settled = true
      hold.settle(used)
    },
  }
}

// The verdict for the `i`th key of a batch's reply.
const verdict = (limit: number, r: Reply, i: number): Verdict => ({
  ok: r[3 * i] === 1,
  limit,
  // Never negative: processes with a lower limit than another's (a rolling change) share the lists.
  remaining: Math.max(0, limit - r[3 * i + 1]),
  resetS: r[3 * i + 1] > 0 ? Math.max(1, Math.ceil(r[3 * i + 2] / 1000)) : 0,
})

// The stricter of Redis's verdict and this process's own window's.
const stricter = (shared: Verdict, own: Verdict) => (!own.ok || own.remaining < shared.remaining ? own : shared)

interface Pending {
  key: string
  hit: boolean
  // The limit that applies to the key (the limiter's, or the key's own lower one).
  limit: number
  done: (v: Verdict) => void
}

// The reply, or a timeout error after `ms`. The timeout is decided one turn of the event loop later, after the
// socket is read: a reply that arrived while the loop was blocked (GC, a large body) still wins, so a busy process
// does not fall back, and grant a fresh window, for a Redis that answered in time. (ioredis' commandTimeout would.)
function within<T>(reply: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => setImmediate(() => reject(new Error(`Redis did not answer within ${ms} ms`))), ms)
    reply.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      }
    )
  })
}

// Resolves once the client is ready, or after `ms` either way.
const readyWithin = (client: Redis, ms: number) =>
  new Promise<void>((ok) => {
    if (client.status === 'ready') return ok()
    const timer = setTimeout(ok, ms)
    client.once('ready', () => {
      clearTimeout(timer)
      ok()
    })
  })

// The client: no offline queue and no retries per request (a failed call is decided in memory at once), with both
// scripts defined.
const connect = (o: RedisLimitsOptions) =>
  new Redis(o.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(1000, o.timeoutMs),
    retryStrategy: (times) => Math.min(times * 100, 1000),
    scripts: {
      studioWindow: { lua: WINDOW_SCRIPT },
      studioMerge: { lua: MERGE_SCRIPT },
      studioTokens: { lua: TOKENS_SCRIPT },
      studioSettle: { lua: SETTLE_SCRIPT },
    },
  })

// The fallback's metrics: decisions made in memory (the returned counter) and whether the process is in fallback.
function fallbackMetrics(metrics: RedisLimitsOptions['metrics'], inFallback: () => boolean) {
  metrics.gauge(
    'studio_ratelimit_redis_fallback',
    '1 while this process limits in memory because Redis fails or is slow, else 0.',
    () => (inFallback() ? 1 : 0)
  )
  return metrics.counter(
    'studio_ratelimit_fallback_total',
    'Rate-limit decisions this process made in memory because Redis failed or was slow.'
  )
}

// The limiters over Redis. A call that fails, or is not answered within `timeoutMs`, is decided by the in-memory
// window instead, and the process stays in that fallback (logged once on entering, once on leaving) until a probe
// gets an answer: no request waits on a Redis that is known to be down. The promises never reject.
//
// The bound, whatever Redis does (down, slow, restarted empty, flushed, in any order): every request a process grants,
// on Redis's word or its own, is counted in its own window (`requests`, `authFailures`) when it is granted, and it
// grants only while that window has room too. So a process never grants a key more than the limit in any 60 s of its
// clock, and N processes never more than N × the limit. Within that, Redis makes the limit exact across processes
// while it answers and keeps its lists; and what a process granted on its own while Redis was away is written into
// Redis, at the times it was granted, as soon as Redis answers again (before any later request of that process), so
// it counts there for every process too.
export async function openRedisLimits(o: RedisLimitsOptions): Promise<RedisLimits> {
  const { log } = o
  const client = connect(o)
  const script = client as unknown as WindowScript & MergeScript
  // Per limiter: what it granted in fallback, written into Redis on leaving it; and the windows to close.
  const replays: (() => Promise<unknown>)[] = []
  const windows: { close(): void }[] = []
  let fallback = false
  let closed = false
  let probe: NodeJS.Timeout | undefined
  const fellBack = fallbackMetrics(o.metrics, () => fallback)

  function leave() {
    if (!fallback || closed) return
    fallback = false
    clearInterval(probe)
    log.info('rate limiter: Redis answers again; the limits are shared again')
    // Sent now, so Redis runs them before any request this process sends it from here on.
    for (const r of replays) r().catch(enter)
  }
  function enter(e: unknown) {
    if (fallback || closed) return
    fallback = true
    log.warn('rate limiter: Redis failed or is slow; limiting in this process until it answers', {
      err: e instanceof Error ? e.message : String(e),
    })
    // The probe runs the script itself (a check: it counts nothing), so a Redis that answers PING but not the script
    // keeps this process in fallback; one probe at a time.
    let probing = false
    probe = setInterval(() => {
      if (probing) return
      probing = true
      within(script.studioWindow(1, [`${o.prefix}${FORMAT}probe`], ['1', '1'], ['0']), o.timeoutMs)
        .then(leave, () => {})
        .finally(() => (probing = false))
    }, PROBE_MS).unref()
  }
  client.on('error', enter)
  client.on('close', () => enter(new Error('connection closed')))

  // The decisions asked during one turn of the event loop go to Redis together, in one script call (one command to
  // encode, one reply to parse, one script run), sent when the turn ends or when MAX_BATCH keys wait.
  function shared(memory: SlidingWindow, space: string): RateLimiter {
    const { limit, windowMs } = memory
    const args = [String(limit), String(windowMs)]
    // What this process granted on its own in fallback and Redis has not counted yet.
    const unshared = new SlidingWindow(limit, windowMs, memory.clock)
    windows.push(unshared)
    replays.push(() => within(replay(script, unshared, space, args), o.timeoutMs))
    const inMemory = (key: string, hit: boolean, own: number) => {
      fellBack()
      if (!hit) return memory.check(key, own)
      const v = memory.hit(key, own)
      if (v.ok) unshared.hit(key)
      return v
    }
    const local = (p: Pending) => p.done(inMemory(p.key, p.hit, p.limit))
    let batch: Pending[] = []
    function flush() {
      const sent = batch
      if (sent.length === 0) return
      batch = []
      if (fallback) return sent.forEach(local)
      const keys = sent.map((p) => space + p.key)
      const modes = sent.map((p) => (p.hit ? '1' : '0'))
      const limits = sent.map((p) => String(p.limit))
      within(script.studioWindow(sent.length, keys, args, modes, limits), o.timeoutMs).then(
        (r) => {
          for (let i = 0; i < sent.length; i++) {
            const p = sent[i]
            const v = verdict(p.limit, r, i)
            // What Redis granted is counted here too, and granted only if this window has room (the bound above).
            // Refused here, it stays counted in Redis: the key gets less, never more.
            if (!v.ok) p.done(v)
            else p.done(stricter(v, p.hit ? memory.hit(p.key, p.limit) : memory.check(p.key, p.limit)))
          }
        },
        (e) => {
          enter(e)
          sent.forEach(local)
        }
      )
    }
    const ask = (key: string, hit: boolean, own?: number): Verdict | Promise<Verdict> => {
      const applies = applying(limit, own)
      if (fallback) return inMemory(key, hit, applies)
      // This process's own window says no: Redis is not asked (nor counts it).
      const mine = memory.check(key, applies)
      if (!mine.ok) return mine
      return new Promise((done) => {
        const n = batch.push({ key, hit, limit: applies, done })
        if (n === 1) setImmediate(flush)
        else if (n >= MAX_BATCH) flush()
      })
    }
    return {
      limit,
      windowMs,
      hit: (key, own) => ask(key, true, own),
      check: (key, own) => ask(key, false, own),
    }
  }

  // Tokens per minute (tokens.ts): one script call per reservation and one per settlement, not batched (a completion
  // waits on its upstream far longer). As for requests, every reservation Redis grants is made in this process's own
  // window too and granted only if it fits there, and in fallback that window decides alone: N processes never
  // reserve more than N × the limit. What a process reserved in fallback is not written into Redis afterwards (its
  // window still holds it for the rest of the minute).
  const ids = { process: randomUUID(), next: 0 }
  const ownTokens = () => {
    const w = new TokenWindow(60_000, o.requests.clock)
    windows.push(w)
    return w
  }
  function sharedTokens(memory: TokenWindow, space: string): TokenLimiter {
    const { windowMs } = memory
    const inMemory = (key: string, limit: number, tokens: number) => {
      fellBack()
      return memory.reserve(key, limit, tokens)
    }
    async function reserve(key: string, limit: number, tokens: number): Promise<TokenVerdict> {
      const id = `${ids.process}.${ids.next++}`
      const member = `${id}:${tokens}`
      let r: Reply
      try {
        r = await within(
          script.studioTokens(1, space + key, String(limit), String(windowMs), String(tokens), id),
          o.timeoutMs
        )
      } catch (e) {
        enter(e)
        return inMemory(key, limit, tokens)
      }
      const remaining = Math.max(0, limit - r[1])
      if (r[0] !== 1) return { ok: false, limit, remaining, resetS: Math.max(1, Math.ceil(r[2] / 1000)), hold: null }
      const settleShared = (used: number) =>
        void within(script.studioSettle(1, space + key, member, String(used)), o.timeoutMs).catch(() => {})
      const mine = memory.reserve(key, limit, tokens)
      // Refused here: Redis's reservation is given back, and this process's verdict stands.
      if (!mine.hold) {
        settleShared(0)
        return mine
      }
      const own = mine.hold
      const hold: TokenHold = {
        tokens,
        settle(used) {
          own.settle(used)
          settleShared(Math.min(tokens, Math.max(0, Math.ceil(used))))
        },
      }
      return { ...mine, remaining: Math.min(remaining, mine.remaining), hold: once(hold) }
    }
    return {
      windowMs,
      reserve: (key, limit, tokens) => (fallback ? inMemory(key, limit, tokens) : reserve(key, limit, tokens)),
    }
  }

  await readyWithin(client, Math.max(1000, o.timeoutMs))
  if (client.status !== 'ready') enter(new Error(`not connected (${client.status})`))
  return {
    limiter: shared(o.requests, `${o.prefix}${FORMAT}key:`),
    authFailures: shared(o.authFailures, `${o.prefix}${FORMAT}auth:`),
    tokens: sharedTokens(o.tokens ?? ownTokens(), `${o.prefix}${FORMAT}tpm:`),
    fallingBack: () => fallback,
    async close() {
      closed = true
      clearInterval(probe)
      for (const w of windows) w.close()
      await client.quit().catch(() => client.disconnect())
    },
  }
}
