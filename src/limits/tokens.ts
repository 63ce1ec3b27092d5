import type { Verdict } from './limits.js'

// What a call holds of its key's tokens-per-minute window: its upper bound, reserved before the upstream is called,
// until `settle` brings it down to what the call used (once; later calls do nothing). The tokens stay in the window at
// the time they were reserved, so a key never has more than its limit in any window of reservation times.
export interface TokenHold {
  readonly tokens: number
  settle(used: number): void
}

// A reservation's verdict: as the request rate's (limits.ts), with the hold when it was granted.
export interface TokenVerdict extends Verdict {
  hold: TokenHold | null
}

// Tokens per key over a rolling window, the request rate's sliding window (limits.ts) with a weight per event: in
// memory (TokenWindow), or shared through Redis with this as its fallback (redis.ts). The limit is the key's own.
export interface TokenLimiter {
  readonly windowMs: number
  // Reserves `tokens` for `key` if they fit under `limit` in the window, else says when enough will have left.
  reserve(key: string, limit: number, tokens: number): TokenVerdict | Promise<TokenVerdict>
}

interface Entry {
  at: number
  tokens: number
  // Left the window: settling it changes nothing.
  gone: boolean
}

interface Log {
  entries: Entry[]
  head: number // the oldest entry still in the window
  sum: number // the tokens of the entries in the window
}

// Whole seconds until `over` tokens have left the window (its entries oldest first), at least 1; the window when they
// never do (a reservation larger than the limit is refused before it gets here).
function secondsUntil(over: number, entries: Iterable<{ at: number; tokens: number }>, windowMs: number, now: number) {
  for (const e of entries) {
    over -= e.tokens
    if (over <= 0) return Math.max(1, Math.ceil((e.at + windowMs - now) / 1000))
  }
  return Math.ceil(windowMs / 1000)
}

// An exact weighted sliding window per key in this process's memory: at most `limit` tokens reserved in any window
// (now - windowMs, now]. Keys idle for a whole window are swept away.
export class TokenWindow implements TokenLimiter {
  private logs = new Map<string, Log>()
  private timer: NodeJS.Timeout

  constructor(
    readonly windowMs: number,
    readonly clock: () => number = Date.now
  ) {
    this.timer = setInterval(() => this.sweep(), windowMs).unref()
  }

  private expire(log: Log, now: number) {
    const edge = now - this.windowMs
    while (log.head < log.entries.length && log.entries[log.head].at <= edge) {
      const e = log.entries[log.head++]
      log.sum -= e.tokens
      e.gone = true
    }
    // The array is cut when most of it has left, so a busy key's stays about one window long.
    if (log.head > 64 && log.head * 2 > log.entries.length) {
      log.entries = log.entries.slice(log.head)
      log.head = 0
    }
  }

  reserve(key: string, limit: number, tokens: number): TokenVerdict {
    const now = this.clock()
    let log = this.logs.get(key)
    if (!log) this.logs.set(key, (log = { entries: [], head: 0, sum: 0 }))
    else this.expire(log, now)
    if (log.sum + tokens > limit) {
      const resetS = secondsUntil(log.sum + tokens - limit, log.entries.slice(log.head), this.windowMs, now)
      return { ok: false, limit, remaining: Math.max(0, limit - log.sum), resetS, hold: null }
    }
    const entry: Entry = { at: now, tokens, gone: false }
    log.entries.push(entry)
    log.sum += tokens
    const held = log
    let settled = false
    const hold: TokenHold = {
      tokens,
      settle(used) {
        if (settled) return
        settled = true
        if (entry.gone) return
        const n = Math.min(entry.tokens, Math.max(0, Math.ceil(used)))
        held.sum -= entry.tokens - n
        entry.tokens = n
      },
    }
    const resetS = secondsUntil(1, log.entries.slice(log.head, log.head + 1), this.windowMs, now)
    return { ok: true, limit, remaining: limit - log.sum, resetS, hold }
  }

  sweep() {
    const now = this.clock()
    for (const [key, log] of this.logs) {
      this.expire(log, now)
      if (log.head === log.entries.length) this.logs.delete(key)
    }
  }

  close() {
    clearInterval(this.timer)
  }
}
