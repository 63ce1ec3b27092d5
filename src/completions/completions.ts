import type { Dispatcher } from 'undici'
import { BASE, route, type Route } from '../http/route.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/metrics.js'
import type { Quota } from '../quota/quota.js'
import type { Recorder } from './recorder.js'
import { CompletionRequest, CompletionResponse } from '../api/schemas.js'
import type { CallOptions } from './call.js'
import type { Upstreams } from './upstreams.js'
import { completeWith } from './complete.js'

export interface CompletionsDeps {
  quota: Quota
  metrics?: Metrics
  upstreams: Upstreams
  dispatcher: Dispatcher
  recorder: Recorder
  log: Logger
  timeoutMs: number
  backoff?: CallOptions['backoff']
}

// POST /api/v1/ai/completions (the operation: complete.ts).
export function completionsRoute(deps: CompletionsDeps): Route {
  return route({
    method: 'POST',
    path: `${BASE}/ai/completions`,
    uses: ['key', 'quota', 'upstream'],
    body: CompletionRequest,
    summary: 'Create a non-streaming language-model completion',
    operationId: 'createCompletion',
    responses: {
      200: { description: 'The completion', schema: CompletionResponse, headers: { 'Server-Timing': serverTiming } },
    },
    handle: completeWith(deps),
  })
}

const serverTiming = {
  description: 'Standard Server-Timing: `upstream;dur=<ms>, total;dur=<ms>`; the difference is what the gateway added.',
  schema: { type: 'string' },
}
