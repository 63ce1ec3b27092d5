export interface Verdict {
  ok: boolean
  limit: number
  remaining: number
  // whole seconds until the oldest request in the window leaves it, i.e. until a slot frees
  resetS: number
}

// What the HTTP pipeline needs of a rate limiter. The in-memory one answers synchronously; a shared one (Redis)
// answers with a promise that never rejects (it falls back to memory instead), and the pipeline awaits only then.
// `own`: a lower limit of the key's own (an API key's, accounts/key-limits.ts); a higher one changes nothing.
export interface RateLimiter {
  readonly limit: number
  readonly windowMs: number
  // Counts one event for `key` if the window has room.
  hit(key: string, own?: number): Verdict | Promise<Verdict>
  // Whether `key` is at its limit, without counting anything.
  check(key: string, own?: number): Verdict | Promise<Verdict>
}

// The limit that applies: the lower of the limiter's and the key's own.
export const applying = (limit: number, own: number | undefined) => (own !== undefined && own < limit ? own : limit)

// A ring of runs, each one float64: the run's time (a whole millisecond) × SPAN plus how many events came at exactly
// that time (fewer than SPAN; one more starts the next run). Exact below 2^53, i.e. for Date.now() until the year 2112.
const SPAN = 2048
const timeOf = (run: number) => Math.floor(run / SPAN)

interface Log {
  runs: Float64Array
  head: number // the oldest run's slot
  used: number // runs in the ring
  count: number // events in the window: the sum of the runs' counts
}

// An exact sliding-window log per key: at most `limit` events in any window (now - windowMs, now]. Each key keeps a
// ring of its event times, events at the same clock reading folded into one run of 8 bytes, grown on demand up to
// `limit` runs: a busy key under a high limit holds at most about one run per millisecond of the window, not one per
// event. Keys idle for a whole window are swept away.
export class SlidingWindow implements RateLimiter {
  private logs = new Map<string, Log>()
  private timer: NodeJS.Timeout

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    readonly clock: () => number = Date.now
  ) {
    this.timer = setInterval(() => this.sweep(), windowMs).unref()
  }

  get size() {
    return this.logs.size
  }

  private expire(log: Log, now: number) {
    const edge = now - this.windowMs
    const cap = log.runs.length
    while (log.used > 0 && timeOf(log.runs[log.head]) <= edge) {
      log.count -= log.runs[log.head] % SPAN
      log.head = (log.head + 1) % cap
      log.used--
    }
  }

  private verdict(log: Log | undefined, now: number, ok: boolean, limit: number): Verdict {
    const remaining = Math.max(0, log ? limit - log.count : limit)
    const resetS =
      log && log.count > 0 ? Math.max(1, Math.ceil((timeOf(log.runs[log.head]) + this.windowMs - now) / 1000)) : 0
    return { ok, limit, remaining, resetS }
  }

  // Counts one event for `key` if the window has room.
  hit(key: string, own?: number): Verdict {
    const now = this.clock()
    const limit = applying(this.limit, own)
    let log = this.logs.get(key)
    if (!log) this.logs.set(key, (log = { runs: new Float64Array(Math.min(2, limit)), head: 0, used: 0, count: 0 }))
    else this.expire(log, now)
    if (log.count >= limit) return this.verdict(log, now, false, limit)
    let cap = log.runs.length
    const last = (log.head + log.used - 1) % cap
    const run = log.runs[last]
    if (log.used > 0 && timeOf(run) === now && run % SPAN < SPAN - 1) log.runs[last]++
    else {
      if (log.used === cap) cap = grow(log, Math.min(cap * 2, this.limit))
      log.runs[(log.head + log.used) % cap] = now * SPAN + 1
      log.used++
    }
    log.count++
    return this.verdict(log, now, true, limit)
  }

  // Whether `key` is at its limit, without counting anything.
  check(key: string, own?: number): Verdict {
    const now = this.clock()
    const limit = applying(this.limit, own)
    const log = this.logs.get(key)
    if (log) this.expire(log, now)
    return this.verdict(log, now, !log || log.count < limit, limit)
  }

  // Every key's event times still in the window (one per event, oldest first), then forgets them all.
  drain(): [string, number[]][] {
    this.sweep()
    const out: [string, number[]][] = []
    for (const [key, log] of this.logs) {
      const times: number[] = []
      for (let i = 0; i < log.used; i++) {
        const run = log.runs[(log.head + i) % log.runs.length]
        for (let n = run % SPAN; n > 0; n--) times.push(timeOf(run))
      }
      out.push([key, times])
    }
    this.logs.clear()
    return out
  }

  sweep() {
    const now = this.clock()
    for (const [key, log] of this.logs) {
      this.expire(log, now)
      if (log.used === 0) this.logs.delete(key)
    }
  }

  close() {
    clearInterval(this.timer)
  }
}

// Copies the ring into one of `cap` runs, oldest first; returns the new capacity.
function grow(log: Log, cap: number): number {
  const old = log.runs.length
  const runs = new Float64Array(cap)
  for (let i = 0; i < log.used; i++) runs[i] = log.runs[(log.head + i) % old]
  log.runs = runs
  log.head = 0
  return cap
}
