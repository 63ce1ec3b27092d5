// One upstream's circuit breaker: after `threshold` retryable failures in a row it cools down for `coolMs`, then
// admits one trial call (half-open); the trial's success closes it, its failure cools it down again. Answers that say
// nothing of the upstream's health (a caller error, a client that went away) leave it as it is.

export type BreakerState = 'ok' | 'cooling'

export interface Breaker {
  state(): BreakerState
  // Whether a call may go now; in half-open, true once until the trial's verdict.
  admit(): boolean
  // Milliseconds until the cool-down ends (0 when not cooling).
  coolingFor(): number
  success(): void
  failure(): void
  neutral(): void
}

export function createBreaker(clock: () => number, { threshold = 5, coolMs = 30_000 } = {}): Breaker {
  let failures = 0
  let openedAt: number | null = null
  let trial = false
  const coolingFor = () => (openedAt === null ? 0 : Math.max(0, openedAt + coolMs - clock()))
  return {
    state: () => (coolingFor() > 0 ? 'cooling' : 'ok'),
    coolingFor,
    admit() {
      if (openedAt === null) return true
      if (coolingFor() > 0 || trial) return false
      trial = true
      return true
    },
    success() {
      failures = 0
      openedAt = null
      trial = false
    },
    failure() {
      failures++
      if (trial || failures >= threshold) openedAt = clock()
      trial = false
    },
    neutral() {
      trial = false
    },
  }
}
