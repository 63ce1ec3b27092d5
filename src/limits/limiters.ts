import type { Config } from '../ops/config.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import { type RateLimiter, SlidingWindow } from './limits.js'
import { type TokenLimiter, TokenWindow } from './tokens.js'

export interface Limiters {
  // Per API key, STUDIO_RATE_LIMIT in any 60 s.
  limiter: RateLimiter
  // Failed authentications per client address, STUDIO_AUTH_FAIL_LIMIT in any 60 s.
  authFailures: RateLimiter
  // Requests per lead key (a key with web origins, in public pages) and client address, STUDIO_LEAD_KEY_ADDRESS_LIMIT
  // in any 60 s; in this process's memory only.
  leadAddresses: SlidingWindow
  // Tokens per API key with a tokens-per-minute limit of its own, in any 60 s (completions/tokens-per-minute.ts).
  tokens: TokenLimiter
  // Where the limits live now: 'memory' (no STUDIO_REDIS_URL), 'redis', or 'fallback' (Redis fails or is slow).
  store(): 'memory' | 'redis' | 'fallback'
  close(): Promise<void>
}

export interface LimitersDeps {
  log: Logger
  metrics: Metrics
  clock: () => number
}

// In memory, or shared through Redis when STUDIO_REDIS_URL is set (with the in-memory windows as the fallback).
export async function openLimiters(config: Config, deps: LimitersDeps): Promise<Limiters> {
  const requests = new SlidingWindow(config.STUDIO_RATE_LIMIT, 60_000, deps.clock)
  const authFailures = new SlidingWindow(config.STUDIO_AUTH_FAIL_LIMIT, 60_000, deps.clock)
  const leadAddresses = new SlidingWindow(config.STUDIO_LEAD_KEY_ADDRESS_LIMIT, 60_000, deps.clock)
  const tokens = new TokenWindow(60_000, deps.clock)
  const closeMemory = () => {
    tokens.close()
    requests.close()
    authFailures.close()
    leadAddresses.close()
  }
  if (!config.STUDIO_REDIS_URL)
    return {
      limiter: requests,
      authFailures,
      leadAddresses,
      tokens,
      store: () => 'memory',
      close: async () => closeMemory(),
    }
  // Loaded only when configured: the Redis client is most of the code behind it, and most servers never need it.
  const { openRedisLimits } = await import('./redis.js')
  const shared = await openRedisLimits({
    url: config.STUDIO_REDIS_URL,
    timeoutMs: config.STUDIO_REDIS_TIMEOUT_MS,
    prefix: config.STUDIO_REDIS_PREFIX,
    requests,
    authFailures,
    tokens,
    log: deps.log,
    metrics: deps.metrics,
  })
  return {
    limiter: shared.limiter,
    authFailures: shared.authFailures,
    leadAddresses,
    tokens: shared.tokens,
    store: () => (shared.fallingBack() ? 'fallback' : 'redis'),
    async close() {
      await shared.close()
      closeMemory()
    },
  }
}
