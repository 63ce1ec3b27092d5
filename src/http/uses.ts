import type { ErrorCode } from './errors.js'
import type { Route } from './route.js'

// What a route may use, and the error codes each use can answer with (their statuses are in errors.ts). The
// pipeline itself checks the key (`key`, which may read the database) and reads the body; the others are what the
// handler reaches for. A route's possible answers are ANY_ROUTE plus those of its uses.
export type Use = 'key' | 'database' | 'quota' | 'upstream' | 'idempotency' | 'alias' | 'model'

// What any route can answer, before or around its handler: a request Node's parser or the pipeline refuses (no
// Host, a body where none is taken, malformed or too slow or too large), a path or method with no route, a bug.
export const ANY_ROUTE: ErrorCode[] = [
  'bad_request',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'payload_too_large',
  'header_too_large',
  'internal_error',
]

const byUse: Record<Use | 'scope' | 'body' | 'headers' | 'query', ErrorCode[]> = {
  key: ['unauthorized', 'rate_limited', 'service_unavailable'],
  scope: ['forbidden'],
  body: ['unsupported_media_type', 'invalid_json', 'invalid_request', 'payload_too_large'],
  headers: ['invalid_request'],
  query: ['invalid_request'],
  database: ['service_unavailable'],
  quota: ['quota_exceeded', 'key_quota_exceeded', 'budget_exceeded', 'service_unavailable'],
  // An upstream 400 is the caller's invalid request (422); the rest are the upstream's failures.
  upstream: ['invalid_request', 'ai_not_configured', 'upstream_error', 'upstream_unavailable', 'upstream_timeout'],
  idempotency: ['idempotency_key_reused'],
  // A model named by any alias string (the OpenAI- and Anthropic-compatible routes), one nobody configured, or one
  // the key may not call.
  alias: ['model_not_found', 'model_not_allowed'],
  // A model among the built-in aliases (the native route) the key may not call.
  model: ['model_not_allowed'],
}

// Every error code the route can answer with, each once.
export function answersOf(route: Pick<Route, 'uses' | 'scope' | 'body' | 'headers' | 'query'>): ErrorCode[] {
  const uses = [
    ...route.uses,
    ...(route.scope ? ['scope' as const] : []),
    ...(route.body ? ['body' as const] : []),
    ...(route.headers ? ['headers' as const] : []),
    ...(route.query ? ['query' as const] : []),
  ]
  return [...new Set([...ANY_ROUTE, ...uses.flatMap((u) => byUse[u])])]
}
