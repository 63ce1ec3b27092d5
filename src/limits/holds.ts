// Units held ahead: quota units this process has reserved in PostgreSQL (committed, counted as used there) for calls
// that have not arrived yet, so that a busy account's calls take a committed unit at once instead of each waiting for
// a commit. Only for an account with many units left (or none limited) and calls arriving fast: the hold is about
// half a second of this process's calls, at most MAX_HELD and a sixteenth of what is left, and nothing at all
// under FLOOR units left, where every call reserves its own unit as before (an answer showing fewer ends the hold at
// once). What a process holds is given back once its calls stop for IDLE_MS, when the account changes, at a new month
// and at shutdown; a crash leaves it counted (never overspent: at most the hold, on the side of the account's limit).
// Another process near the limit may be refused, for at most IDLE_MS, units an idle process still holds.

export const FLOOR = 1000
export const MAX_HELD = 256
const HOLD_S = 0.5
export const IDLE_MS = 300
const RATE_WINDOW_MS = 1000

export interface Hold {
  month: string
  units: number
  // Calls taken in the current rate window, when it started, and the rate of the last full window (per second).
  taken: number
  windowAt: number
  rate: number
  lastTakeAt: number
  // Units asked for by batches under way (a hold with units asked is not swept).
  asked: number
}

export const newHold = (month: string, now: number): Hold => ({
  month,
  units: 0,
  taken: 0,
  windowAt: now,
  rate: 0,
  lastTakeAt: now,
  asked: 0,
})

// Counts a call for the rate, taking a held unit when there is one.
export function take(h: Hold, now: number): boolean {
  h.lastTakeAt = now
  const elapsed = now - h.windowAt
  if (elapsed >= RATE_WINDOW_MS) (h.rate = (h.taken * 1000) / elapsed), (h.taken = 0), (h.windowAt = now)
  h.taken++
  if (h.units === 0) return false
  h.units--
  return true
}

// How many units this process should hold for the account, given what is left (Infinity: unlimited) and known.
export function target(h: Hold, left: number | undefined, now: number): number {
  if (left === undefined || left < FLOOR) return 0
  const elapsed = now - h.windowAt
  const rate = elapsed >= 100 ? Math.max(h.rate, (h.taken * 1000) / elapsed) : h.rate
  const want = Math.min(MAX_HELD, Math.floor(left / 16), Math.floor(rate * HOLD_S))
  return want >= 2 ? want : 0
}
