import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Principal } from '../accounts/auth.js'
import type { SlidingWindow } from '../limits/limits.js'
import { clientAddress } from './client-address.js'
import { ApiError } from './errors.js'

// CORS for the routes a web page's own script may call (a route's `cors`: POST /leads) with a browser-safe lead key,
// one that names the origins whose pages may use it.

// The origins some key in force allows (accounts/origins.ts keeps them in memory): a preflight carries no key.
export interface BrowserOrigins {
  allows(origin: string): boolean
}

const ALLOW_HEADERS = 'authorization, content-type, idempotency-key, x-captcha-token'
const EXPOSE_HEADERS = 'retry-after, ratelimit, ratelimit-policy, x-request-id, idempotent-replayed'
// How long a browser may keep a preflight's answer (seconds).
export const PREFLIGHT_MAX_AGE = 600

// OPTIONS: 204, with the CORS headers that let the browser send its POST when some key allows the request's Origin;
// without them (the browser then refuses to send it) for any other origin.
export function preflight(req: IncomingMessage, res: ServerResponse, headers: string[], origins?: BrowserOrigins) {
  const origin = req.headers.origin
  headers.push('vary', 'Origin')
  if (origin && origins?.allows(origin))
    headers.push(
      'access-control-allow-origin',
      origin,
      'access-control-allow-methods',
      'POST',
      'access-control-allow-headers',
      ALLOW_HEADERS,
      'access-control-max-age',
      String(PREFLIGHT_MAX_AGE)
    )
  res.writeHead(204, headers).end()
}

// Requests per lead key and client address (limits/: an in-memory sliding window).
export type AddressLimiter = Pick<SlidingWindow, 'hit'>

// The request itself, before its key is looked at: from an Origin some key allows, its answer, error or not (a wrong
// key, a rate limit), lets the page read it.
export function corsHeaders(req: IncomingMessage, headers: string[], origins?: BrowserOrigins) {
  headers.push('vary', 'Origin')
  const origin = req.headers.origin
  if (origin !== undefined && origins?.allows(origin))
    headers.push('access-control-allow-origin', origin, 'access-control-expose-headers', EXPOSE_HEADERS)
}

// Its key known, in the key step before the key's rate limit counts it (http/authenticate.ts): without Origin (a
// server, curl) it is served as from any key; with one, only if the key names that origin (403 `forbidden` otherwise:
// a key with other scopes names none). A lead key (one with origins) is public, so its requests are also limited per
// client address (429 `rate_limited`), with Origin or without. A request refused here spends nothing of the key's.
export function admitOrigin(req: IncomingMessage, p: Principal, addresses?: AddressLimiter) {
  const origin = req.headers.origin
  if (origin !== undefined && !p.origins?.includes(origin)) {
    const shown = origin.length > 200 ? `${origin.slice(0, 200)}…` : origin
    throw new ApiError({
      code: 'forbidden',
      message: `This key may not be used from web pages of ${shown}`,
      details: { origin: shown },
    })
  }
  if (p.origins) limitAddress(req, p.prefix, addresses)
}

// A public key's requests from one client address (429 `rate_limited` past the limit).
export function limitAddress(req: IncomingMessage, prefix: string, addresses?: AddressLimiter) {
  if (!addresses) return
  const v = addresses.hit(`${prefix} ${clientAddress(req)}`)
  if (!v.ok)
    throw new ApiError({
      code: 'rate_limited',
      message: `More than ${v.limit} requests in 60 seconds with this key from this address`,
      details: { limit: v.limit, retry_after: v.resetS },
      headers: { 'retry-after': String(v.resetS) },
    })
}
