import { ApiError } from '../http/errors.js'
import type { Metrics } from '../ops/service-metrics.js'
import { CallAbort } from './abort.js'
import { anthropicAdapter } from './anthropic.js'
import { type Breaker, type BreakerState, createBreaker } from './breaker.js'
import {
  type Adapter,
  type Attempted,
  type CallBody,
  type CallOptions,
  type CompletionCall,
  type Protocol,
  type ProtocolCall,
  UpstreamFailure,
  type UpstreamConfig,
} from './call.js'
import { openaiAdapter } from './openai.js'
import { echoAdapter } from './echo.js'
import { callUpstream, notConfigured } from './retries.js'

// The upstreams of STUDIO_UPSTREAM in fallback order, each with its breaker: a call goes to the first not cooling
// down and moves on to the next at once when an attempt fails in a way another upstream may not (unreachable, timed
// out, overloaded); the last that can be tried gets the retries with backoff.

type Alias = keyof Adapter['models']

// One attempt, as the completion's record keeps it.
export interface Try {
  upstream: string
  model: string
  outcome: string
  latency_ms: number
}

export interface Upstreams {
  // The first upstream's model for an alias (a call's model until an upstream answers).
  model(alias: Alias): string
  // Every upstream's model for an alias, in fallback order (a budget bounds a call at the dearest).
  models(alias: Alias): string[]
  // The first upstream's adapter: count_tokens asks it alone (a count is of one model's tokens).
  first(): Adapter
  notConfigured(): ApiError | null
  // The model aliases a call may name: `primary`, `fast` and the operator's.
  aliases(): Alias[]
  // The protocols of the upstreams a call may reach, in fallback order.
  protocols(): Protocol[]
  states(): Record<string, BreakerState>
  // `tries` gets every attempt, in order; the result's (or the failure's) attempts counts them all.
  call(alias: Alias, call: CallBody, opts: CallOptions, tries: Try[]): Promise<Attempted>
}

const FALL_OVER_STATUS = new Set([408, 429, 500, 502, 503, 504, 529])
const fallsOver = (e: unknown) =>
  e instanceof UpstreamFailure &&
  (e.outcome === 'upstream_unreachable' ||
    e.outcome === 'upstream_timeout' ||
    (e.status !== null && FALL_OVER_STATUS.has(e.status)))
// A connection that broke after the upstream was sent the request ends the call (attempt.ts), and still counts
// against that upstream's breaker, as an unreachable one does.
const countsAgainst = (e: unknown) =>
  fallsOver(e) || (e instanceof UpstreamFailure && e.outcome === 'upstream_broke_off')

const ADAPTERS = { anthropic: anthropicAdapter, openai: openaiAdapter, echo: echoAdapter }

export const adaptersFor = (config: UpstreamConfig): Adapter[] => config.STUDIO_UPSTREAM.map((n) => ADAPTERS[n](config))

interface Upstream {
  adapter: Adapter
  breaker: Breaker
}

export function createUpstreams(adapters: Adapter[], o: { clock?: () => number; metrics?: Metrics } = {}): Upstreams {
  const clock = o.clock ?? Date.now
  // A lone upstream never cools down: there is nowhere else to send its calls.
  const threshold = adapters.length > 1 ? 5 : Number.POSITIVE_INFINITY
  const list: Upstream[] = adapters.map((adapter) => ({ adapter, breaker: createBreaker(clock, { threshold }) }))
  const names = adapters.map((a) => a.name)
  const byName = new Map(list.map((u) => [u.adapter.name, u]))
  const attempted = o.metrics?.counterBy(
    'studio_upstream_attempts_total',
    'Attempts sent to each upstream (a completion may make several).',
    'upstream',
    names
  )
  const failedAttempt = o.metrics?.counterBy(
    'studio_upstream_failures_total',
    'Attempts that failed in a way that counts against the upstream (unreachable, broken off, timed out, overloaded).',
    'upstream',
    names
  )
  o.metrics?.gaugeBy(
    'studio_upstream_cooling',
    'Whether the upstream is cooling down after consecutive failures (1) or takes calls (0).',
    'upstream',
    names,
    (name) => (byName.get(name)?.breaker.state() === 'cooling' ? 1 : 0)
  )

  // One upstream's part of a call, under an abort of its own (its deadline must not end the next upstream's part),
  // which the call's abort cancels.
  async function callOne(
    u: Upstream,
    call: CompletionCall | ProtocolCall,
    opts: CallOptions,
    retries: boolean,
    tries: Try[]
  ) {
    const abort = new CallAbort()
    const cancel = () => abort.cancel()
    if (opts.abort.aborted) abort.cancel()
    else opts.abort.on('abort', cancel)
    const name = u.adapter.name
    const onAttempt = (failure: unknown, ms: number) => {
      const outcome = failure === null ? 'ok' : failure instanceof UpstreamFailure ? failure.outcome : 'upstream_error'
      tries.push({ upstream: name, model: call.model, outcome, latency_ms: Math.round(ms) })
      attempted?.(name)
      if (failure === null) u.breaker.success()
      else if (countsAgainst(failure)) {
        failedAttempt?.(name)
        u.breaker.failure()
      } else u.breaker.neutral()
    }
    try {
      return await callUpstream(u.adapter, call, { ...opts, abort, onAttempt, ...(retries ? {} : { retries: 0 }) })
    } finally {
      // A stream goes on past its first event, where this returns: the call's abort must still end it.
      if (!opts.stream) opts.abort.removeListener('abort', cancel)
    }
  }

  function allCooling(): UpstreamFailure {
    const seconds = Math.ceil(Math.min(...list.map((u) => u.breaker.coolingFor())) / 1000)
    const api = new ApiError({
      code: 'upstream_unavailable',
      message: 'Every upstream is cooling down after repeated failures; try again later',
      headers: { 'retry-after': String(Math.max(1, seconds)) },
    })
    return new UpstreamFailure(api, { outcome: 'upstream_cooling', attempts: 0 })
  }

  return {
    model: (alias) => list[0].adapter.models[alias],
    models: (alias) => list.map((u) => u.adapter.models[alias]).filter((m) => m !== undefined),
    first: () => list[0].adapter,
    notConfigured: () => notConfigured(list[0].adapter),
    aliases: () => Object.keys(list[0].adapter.models),
    protocols: () => [...new Set(list.map((u) => u.adapter.protocol))],
    states: () => Object.fromEntries(list.map((u) => [u.adapter.name, u.breaker.state()])),
    async call(alias, base, opts, tries) {
      let failed: UpstreamFailure | null = null
      for (let i = 0; i < list.length; i++) {
        const u = list[i]
        if (!u.breaker.admit()) continue
        const last = !list.slice(i + 1).some((v) => v.breaker.state() === 'ok')
        try {
          const r = await callOne(
            u,
            { ...base, model: u.adapter.models[alias] } as CompletionCall | ProtocolCall,
            opts,
            last,
            tries
          )
          return { ...r, attempts: tries.length }
        } catch (e) {
          if (!(e instanceof UpstreamFailure)) throw e
          failed = e
          if (last || !fallsOver(e) || opts.abort.aborted) break
        }
      }
      if (!failed) throw allCooling()
      const { outcome, requestId, status } = failed
      throw new UpstreamFailure(failed.api, { outcome, attempts: tries.length, requestId, status })
    },
  }
}
