import type { IncomingMessage } from 'node:http'
import type { KeyStore, Principal } from '../accounts/auth.js'
import type { RateLimiter, Verdict } from '../limits/limits.js'
import type { Metrics } from '../ops/metrics.js'
import { ApiError } from './errors.js'
import { authorizationOf } from './io.js'

export interface AuthenticateDeps {
  keys: KeyStore
  limiter: RateLimiter
  authFailures: RateLimiter
  metrics?: Metrics
}

const rateLimited = (message: string, v: Verdict) =>
  new ApiError('rate_limited', message, { limit: v.limit, retry_after: v.resetS }, { 'retry-after': String(v.resetS) })

// The pipeline's key step: the key of the request (401 when missing or wrong), failed attempts limited per client
// address, then the key's rate limit, whose state goes into the response headers.
export function createAuthenticator(deps: AuthenticateDeps) {
  const policy = `"default";q=${deps.limiter.limit};w=${deps.limiter.windowMs / 1000}`
  return async function authenticate(req: IncomingMessage, headers: string[]): Promise<Principal> {
    const authorization = authorizationOf(req)
    // A key this process has already verified is served whatever the failed-auth window of the address says: the
    // block stops guessing, and clients sharing the address (behind a proxy, a NAT) are not locked out by one of
    // them. So the window is read only for keys not known here (with a shared limiter, one round trip saved).
    let principal = deps.keys.cached(authorization)
    if (!principal) {
      const address = req.socket.remoteAddress ?? ''
      const checked = deps.authFailures.check(address)
      const blocked = checked instanceof Promise ? await checked : checked
      if (!blocked.ok) {
        deps.metrics?.refused('rate_limited')
        throw rateLimited('Too many failed authentications from this address', blocked)
      }
      try {
        const p = deps.keys.authenticate(authorization)
        principal = p instanceof Promise ? await p : p
      } catch (e) {
        if (e instanceof ApiError && e.code === 'unauthorized') {
          const counted = deps.authFailures.hit(address)
          if (counted instanceof Promise) await counted
        }
        throw e
      }
    }
    const hit = deps.limiter.hit(principal.prefix)
    const v = hit instanceof Promise ? await hit : hit
    headers.push('ratelimit-policy', policy, 'ratelimit', `"default";r=${v.remaining};t=${v.resetS}`)
    if (!v.ok) {
      deps.metrics?.refused('rate_limited')
      throw rateLimited(`More than ${v.limit} requests in 60 seconds with this key`, v)
    }
    return principal
  }
}
