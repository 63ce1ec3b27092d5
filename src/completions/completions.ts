import type { Transport } from '../ops/transport.js'
import { BASE, route, type Route } from '../http/route.js'
import type { ErrorCode } from '../http/errors.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import type { Quota } from '../quota/quota.js'
import type { Recorder } from './record-writer.js'
import type { Prices } from './prices.js'
import type { Budgets } from './budget.js'
import type { TokenLimiter } from '../limits/tokens.js'
import { CompletionDelta, CompletionRequest, CompletionResponse } from '../api/schemas.js'
import type { CallOptions } from './call.js'
import type { Upstreams } from './fallback.js'
import { COST_HEADER, complete, SERVER_TIMING } from './complete.js'

export interface CompletionsDeps {
  quota: Quota
  metrics?: Metrics
  upstreams: Upstreams
  dispatcher: Transport
  recorder: Recorder
  prices: Prices
  budgets: Budgets
  // Keys' tokens per minute (limits/tokens.ts); absent: not held.
  tokens?: TokenLimiter
  log: Logger
  timeoutMs: number
  backoff?: CallOptions['backoff']
  // Milliseconds of silence before a stream's `: ping` (sse-reply.ts); tests shorten it.
  pingMs?: number
}

// POST /api/v1/ai/completions (the operation: complete.ts).
export function completionsRoute(deps: CompletionsDeps): Route {
  return route({
    method: 'POST',
    path: `${BASE}/ai/completions`,
    uses: ['key', 'quota', 'upstream', 'model'],
    scope: 'completions:write',
    body: CompletionRequest,
    summary: 'Create a language-model completion, whole or streamed',
    operationId: 'createCompletion',
    responses: {
      200: {
        description: 'The completion (`application/json`), or with `stream: true` its server-sent events',
        schema: CompletionResponse,
        headers: { 'Server-Timing': SERVER_TIMING, 'x-studio-cost-usd': COST_HEADER },
        events: { description: EVENTS, data: { delta: CompletionDelta, done: CompletionResponse }, errors: ERRORS },
      },
    },
    handle: (x) => complete(deps, x),
  })
}

const EVENTS =
  'Server-sent events: `delta` (`{"text"}`, each piece of text in order), then `done` (the CompletionResponse, ' +
  'once, last) or `error` (the Error body, when the call fails after the stream began); `: ping` comments keep ' +
  'the connection while nothing else is sent. Errors before the first event are ordinary JSON answers.'
const ERRORS: ErrorCode[] = [
  'upstream_error',
  'quota_exceeded',
  'key_quota_exceeded',
  'budget_exceeded',
  'service_unavailable',
]
