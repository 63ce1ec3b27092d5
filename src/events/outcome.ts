import type { Outcome } from './deliveries.js'
import type { PostResult } from './post.js'
import { nextDelayMs, retryAfterMs } from './schedule.js'

const FIVE_DAYS_MS = 5 * 86_400_000

export interface Judged {
  attempts: number
  failingSince: Date | null
}

// What one attempt's answer means for its delivery and its endpoint.
export function outcomeOf(d: Judged, result: PostResult, now: number, random: () => number): Outcome {
  const { status } = result
  if (status !== null && status >= 200 && status < 300) return { kind: 'delivered' }
  if (status === 410) return { kind: 'disable', reason: 'the endpoint answered 410 Gone' }
  if (d.failingSince && now - d.failingSince.getTime() >= FIVE_DAYS_MS)
    return { kind: 'disable', reason: 'every delivery failed for 5 days' }
  const honoured = status === 429 || status === 503 ? retryAfterMs(result.retryAfter, now) : undefined
  const delay = nextDelayMs(d.attempts + 1, random, honoured)
  return delay === null ? { kind: 'failed' } : { kind: 'retry', nextAt: new Date(now + delay) }
}
