// When a failed delivery is tried again: the Standard Webhooks schedule (at once, then 5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h and 10 h after each failure), each delay spread by up to 10% either way so that endpoints that failed
// together are not retried together. A 429 or 503 answer's Retry-After is honoured (never retried sooner).

const S = 1000
const H = 3600 * S
const RETRY_DELAYS_MS = [5 * S, 300 * S, 1800 * S, 2 * H, 5 * H, 10 * H, 10 * H] as const
const JITTER = 0.1
const MAX_RETRY_AFTER_MS = 10 * H

// Retry-After in seconds or as an HTTP date, in ms from `now`; undefined when absent or unreadable.
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * S : Date.parse(value) - now
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined
}

// The delay before the next attempt after `attempts` failed ones, or null when the schedule is exhausted.
export function nextDelayMs(attempts: number, random: () => number, retryAfter?: number): number | null {
  const base = RETRY_DELAYS_MS[attempts - 1]
  if (base === undefined) return null
  const delay = Math.round(base * (1 - JITTER + 2 * JITTER * random()))
  return Math.max(delay, retryAfter ?? 0)
}
