// Units held ahead: units this process has reserved (counted against the limit in the store) for calls that have not
// arrived yet, so that a busy account's calls take a committed unit at once instead of each waiting for a round trip.
// Only for an account with many units left (or none limited) and calls arriving fast: about half a second of this
// process's calls, at most MAX_HELD and a sixteenth of what is left, and nothing at all under FLOOR units left, where
// every call reserves its own unit. What a process holds ahead goes back once its calls stop for IDLE_MS, when the
// account changes, at a new month and at shutdown; a crash leaves it held until the process's lease runs out.

export const FLOOR = 1000
export const MAX_HELD = 256
const HOLD_S = 0.5
export const IDLE_MS = 300
const RATE_WINDOW_MS = 1000

// The rate of an account's calls in this process: calls in the current window, when it started, the last full
// window's rate (per second), and the last call.
export class CallRate {
  private taken = 0
  private rate = 0
  lastAt: number

  constructor(private windowAt: number) {
    this.lastAt = windowAt
  }

  count(now: number) {
    this.lastAt = now
    const elapsed = now - this.windowAt
    if (elapsed >= RATE_WINDOW_MS) {
      this.rate = (this.taken * 1000) / elapsed
      this.taken = 0
      this.windowAt = now
    }
    this.taken++
  }

  // How many units to hold ahead, given what is left (Infinity: unlimited; undefined: not known).
  target(left: number | undefined, now: number): number {
    if (left === undefined || left < FLOOR) return 0
    const elapsed = now - this.windowAt
    const rate = elapsed >= 100 ? Math.max(this.rate, (this.taken * 1000) / elapsed) : this.rate
    const want = Math.min(MAX_HELD, Math.floor(left / 16), Math.floor(rate * HOLD_S))
    return want >= 2 ? want : 0
  }
}
