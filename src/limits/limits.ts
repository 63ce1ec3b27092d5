export interface Verdict {
  ok: boolean
  limit: number
  remaining: number
  // whole seconds until the oldest request in the window leaves it, i.e. until a slot frees
  resetS: number
}

// What the HTTP pipeline needs of a rate limiter. The in-memory one answers synchronously; a shared one (Redis)
// answers with a promise that never rejects (it falls back to memory instead), and the pipeline awaits only then.
export interface RateLimiter {
  readonly limit: number
  readonly windowMs: number
  // Counts one event for `key` if the window has room.
  hit(key: string): Verdict | Promise<Verdict>
  // Whether `key` is at its limit, without counting anything.
  check(key: string): Verdict | Promise<Verdict>
}

interface Log {
  times: Float64Array
  head: number
  count: number
}

// An exact sliding-window log per key: at most `limit` events in any window (now - windowMs, now]. Each key keeps a
// ring of its event times, grown on demand up to `limit`; keys idle for a whole window are swept away.
export class SlidingWindow implements RateLimiter {
  private logs = new Map<string, Log>()
  private timer: NodeJS.Timeout

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private clock: () => number = Date.now
  ) {
    this.timer = setInterval(() => this.sweep(), windowMs).unref()
  }

  get size() {
    return this.logs.size
  }

  private expire(log: Log, now: number) {
    const edge = now - this.windowMs
    const cap = log.times.length
    while (log.count > 0 && log.times[log.head] <= edge) {
      log.head = (log.head + 1) % cap
      log.count--
    }
  }

  private verdict(log: Log | undefined, now: number, ok: boolean): Verdict {
    const remaining = log ? this.limit - log.count : this.limit
    const resetS = log && log.count > 0 ? Math.max(1, Math.ceil((log.times[log.head] + this.windowMs - now) / 1000)) : 0
    return { ok, limit: this.limit, remaining, resetS }
  }

  // Counts one event for `key` if the window has room.
  hit(key: string): Verdict {
    const now = this.clock()
    let log = this.logs.get(key)
    if (!log) this.logs.set(key, (log = { times: new Float64Array(Math.min(4, this.limit)), head: 0, count: 0 }))
    else this.expire(log, now)
    if (log.count >= this.limit) return this.verdict(log, now, false)
    let cap = log.times.length
    if (log.count === cap) {
      const grown = new Float64Array(Math.min(cap * 2, this.limit))
      for (let i = 0; i < log.count; i++) grown[i] = log.times[(log.head + i) % cap]
      log.times = grown
      log.head = 0
      cap = grown.length
    }
    log.times[(log.head + log.count) % cap] = now
    log.count++
    return this.verdict(log, now, true)
  }

  // Whether `key` is at its limit, without counting anything.
  check(key: string): Verdict {
    const now = this.clock()
    const log = this.logs.get(key)
    if (log) this.expire(log, now)
    return this.verdict(log, now, !log || log.count < this.limit)
  }

  sweep() {
    const now = this.clock()
    for (const [key, log] of this.logs) {
      this.expire(log, now)
      if (log.count === 0) this.logs.delete(key)
    }
  }

  close() {
    clearInterval(this.timer)
  }
}
