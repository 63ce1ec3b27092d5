import type { IncomingMessage } from 'node:http'
import type { KeyStore, Principal } from '../accounts/auth.js'
import type { Scope } from '../accounts/scopes.js'
import type { RateLimiter, Verdict } from '../limits/limits.js'
import type { Metrics } from '../ops/service-metrics.js'
import { clientAddress } from './client-address.js'
import { type AddressLimiter, admitOrigin } from './cors.js'
import { ApiError } from './errors.js'
import { authorizationOf } from './io.js'

export interface AuthenticateDeps {
  keys: KeyStore
  limiter: RateLimiter
  authFailures: RateLimiter
  metrics?: Metrics
  // Requests per lead key and client address, for the routes a web page may call (cors.ts).
  leadAddresses?: AddressLimiter
}

// What the key step needs of the route: the scope it takes, and whether a web page's script may call it (cors.ts).
interface KeyStep {
  scope?: Scope
  cors?: boolean
  apiKeyHeader?: boolean
}

// The key of a route that takes `x-api-key` too, when the request has no Authorization header, as a Bearer one.
function apiKeyOf(req: IncomingMessage, route: KeyStep): string | undefined {
  if (!route.apiKeyHeader || req.headers.authorization !== undefined) return undefined
  const key = req.headers['x-api-key']
  return typeof key === 'string' ? `Bearer ${key}` : undefined
}

export const rateLimited = (message: string, v: Verdict) =>
  new ApiError({
    code: 'rate_limited',
    message,
    details: { limit: v.limit, retry_after: v.resetS },
    headers: { 'retry-after': String(v.resetS) },
  })

const forbidden = (scope: Scope) =>
  new ApiError({
    code: 'forbidden',
    message: `This key lacks the scope ${scope}, which this operation needs`,
    details: { required_scope: scope },
  })

// The pipeline's key step: the key of the request (401 when missing or wrong), failed attempts limited per client
// address, the scope the route needs (403), then the key's rate limit (the service's, or the key's own when lower),
// whose state goes into the response headers. Synchronous (no promise) for a key this process has verified and an
// in-memory limiter: the common case, on every request.
export function createAuthenticator(deps: AuthenticateDeps) {
  const policyOf = (limit: number) => `"default";q=${limit};w=${deps.limiter.windowMs / 1000}`
  const policy = policyOf(deps.limiter.limit)

  function admit(principal: Principal, v: Verdict, headers: string[]): Principal {
    const applies = v.limit === deps.limiter.limit ? policy : policyOf(v.limit)
    headers.push('ratelimit-policy', applies, 'ratelimit', `"default";r=${v.remaining};t=${v.resetS}`)
    if (!v.ok) {
      deps.metrics?.refused('rate_limited')
      throw rateLimited(`More than ${v.limit} requests in 60 seconds with this key`, v)
    }
    return principal
  }

  // A key without the route's scope, or refused by the route's origin and address checks, is refused before its
  // request is counted: it spends nothing.
  function limit(req: IncomingMessage, principal: Principal, headers: string[], route: KeyStep) {
    if (route.scope && !principal.scopes.includes(route.scope)) throw forbidden(route.scope)
    if (route.cors) admitOrigin(req, principal, deps.leadAddresses)
    const hit = deps.limiter.hit(principal.prefix, principal.rateLimit ?? undefined)
    return hit instanceof Promise ? hit.then((v) => admit(principal, v, headers)) : admit(principal, hit, headers)
  }

  async function verify(req: IncomingMessage, authorization: string | undefined): Promise<Principal> {
    const address = clientAddress(req)
    const checked = deps.authFailures.check(address)
    const blocked = checked instanceof Promise ? await checked : checked
    if (!blocked.ok) {
      deps.metrics?.refused('rate_limited')
      throw rateLimited('Too many failed authentications from this address', blocked)
    }
    try {
      const p = deps.keys.authenticate(authorization)
      return p instanceof Promise ? await p : p
    } catch (e) {
      if (e instanceof ApiError && e.code === 'unauthorized') {
        const counted = deps.authFailures.hit(address)
        if (counted instanceof Promise) await counted
      }
      throw e
    }
  }

  return function authenticate(
    req: IncomingMessage,
    headers: string[],
    route: KeyStep
  ): Principal | Promise<Principal> {
    const authorization = authorizationOf(req) ?? apiKeyOf(req, route)
    // A key this process has already verified is served whatever the failed-auth window of the address says: the
    // block stops guessing, and clients sharing the address (behind a proxy, a NAT) are not locked out by one of
    // them. So the window is read only for keys not known here (with a shared limiter, one round trip saved).
    const principal = deps.keys.cached(authorization)
    if (!principal) return verify(req, authorization).then((p) => limit(req, p, headers, route))
    return limit(req, principal, headers, route)
  }
}
