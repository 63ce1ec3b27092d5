import type { Principal } from '../accounts/auth.js'
import { rateLimited } from '../http/authenticate.js'
import { ApiError } from '../http/errors.js'
import type { TokenHold, TokenLimiter } from '../limits/tokens.js'
import type { Metrics } from '../ops/service-metrics.js'
import { tokenBound, unboundedPartOf, unboundedRefusal } from './budget.js'
import type { CallBody, Usage } from './call.js'

// A key's tokens-per-minute limit (sql/048, docs/spend.md): before the upstream is called, the call's upper bound of
// tokens (its body's bytes plus max_tokens, as the budget's bound) is reserved in the key's rolling 60 s window
// (limits/tokens.ts, shared through Redis when configured); the record settles it to what the upstream said the call
// used (input plus cache writes plus output; cache reads are not counted), and a call that ends with no record settles
// to nothing. A call that does not fit: 429 rate_limited with Retry-After. A key with no limit costs one comparison.
export async function reserveTokens(
  limiter: TokenLimiter | undefined,
  principal: Principal,
  call: CallBody,
  metrics?: Metrics
): Promise<TokenHold | null> {
  const limit = principal.tokensPerMinute
  if (limit == null || !limiter) return null
  const part = unboundedPartOf(call)
  if (part) throw unboundedRefusal(part, 'this key has a tokens-per-minute limit')
  const tokens = tokenBound(call)
  if (tokens === null)
    throw new ApiError({
      code: 'invalid_request',
      message: 'max_tokens: required when the key has a tokens-per-minute limit',
    })
  if (tokens > limit)
    throw new ApiError({
      code: 'invalid_request',
      message:
        `max_tokens: this call may use up to ${tokens} tokens (its body's bytes plus max_tokens), more than this ` +
        `key's limit of ${limit} tokens per minute`,
    })
  const v = await limiter.reserve(principal.countsAs, limit, tokens)
  if (v.hold) return v.hold
  metrics?.refused('rate_limited')
  throw rateLimited(`More than ${limit} tokens in 60 seconds with this key`, v)
}

// The tokens a call counts against the limit: what it read and wrote but cache reads, and what it answered.
export const countedTokens = (u: Usage) => u.input_tokens + u.cache_creation_input_tokens + u.output_tokens
