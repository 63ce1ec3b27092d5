import type { Dispatcher } from 'undici'
import { BASE, route, type Route } from '../http/route.js'
import type { Logger } from '../ops/log.js'
import { ApiError } from '../http/errors.js'
import type { Metrics } from '../ops/metrics.js'
import type { Quota } from '../limits/quota.js'
import type { Recorder } from './recorder.js'
import { CompletionRequest, CompletionResponse } from '../api/schemas.js'
import { type Adapter, type CallOptions, UpstreamFailure, type Usage } from './call.js'
import { callUpstream, notConfigured } from './upstream.js'

export interface CompletionsDeps {
  quota: Quota
  metrics?: Metrics
  adapter: Adapter
  dispatcher: Dispatcher
  recorder: Recorder
  log: Logger
  timeoutMs: number
  backoff?: CallOptions['backoff']
}

const serverTiming = {
  description: 'Standard Server-Timing: `upstream;dur=<ms>, total;dur=<ms>`; the difference is what the gateway added.',
  schema: { type: 'string' },
}

export function completionsRoute(deps: CompletionsDeps): Route {
  const { adapter, recorder, log } = deps
  const onAuthFailure = (status: number) =>
    log.error(`the ${adapter.name} upstream refused our credentials (${status}): check the API key setting`, {
      upstream: adapter.name,
      status,
    })
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
    async handle({ principal, body, res, started }) {
      const off = notConfigured(adapter)
      if (off) throw off
      const upstreamModel = adapter.models[body.model]
      const aborter = new AbortController()
      const onClose = () => res.writableFinished || aborter.abort()
      res.once('close', onClose)
      const reservation = await deps.quota.reserve(principal.accountId).catch((e) => {
        res.off('close', onClose)
        if (e instanceof ApiError && e.code === 'quota_exceeded') deps.metrics?.refused('quota_exceeded')
        throw e
      })
      let consumed = false
      const t0 = performance.now()
      const record = (outcome: string, attempts: number, requestId: string | null, usage?: Usage) => {
        deps.metrics?.upstream(outcome, (performance.now() - t0) / 1000)
        recorder.record({
          account_id: principal.accountId,
          key_prefix: principal.prefix,
          model_alias: body.model,
          upstream_model: upstreamModel,
          input_tokens: usage?.input_tokens ?? 0,
          output_tokens: usage?.output_tokens ?? 0,
          cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
          cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
          latency_ms: Math.round(performance.now() - t0),
          attempts,
          outcome,
          upstream_request_id: requestId,
          created_at: new Date(),
        })
      }
      try {
        const call = {
          model: upstreamModel,
          messages: body.messages,
          system: body.system,
          max_tokens: body.max_tokens,
          temperature: body.temperature,
        }
        const r = await callUpstream(adapter, call, {
          dispatcher: deps.dispatcher,
          timeoutMs: deps.timeoutMs,
          signal: aborter.signal,
          onAuthFailure,
          backoff: deps.backoff,
        })
        const upstreamMs = performance.now() - t0
        consumed = true
        record('ok', r.attempts, r.requestId, r.completion.usage)
        const timing = `upstream;dur=${upstreamMs.toFixed(1)}, total;dur=${(performance.now() - started).toFixed(1)}`
        return { status: 200, body: r.completion, headers: { 'server-timing': timing } }
      } catch (e) {
        if (!(e instanceof UpstreamFailure)) throw e
        record(e.outcome, e.attempts, e.requestId)
        log.warn('upstream call failed', {
          upstream: adapter.name,
          outcome: e.outcome,
          attempts: e.attempts,
          upstream_request_id: e.requestId,
        })
        throw e.api
      } finally {
        res.off('close', onClose)
        if (!consumed)
          await deps.quota
            .release(reservation)
            .catch((e) => log.error('quota unit not given back', { account: principal.accountId }, e))
      }
    },
  })
}
