import { ApiError } from '../http/errors.js'
import type { Usage } from './call.js'
import type { CompletionContext } from './context.js'
import { countedTokens } from './tokens-per-minute.js'

// Which call a record is of: its attempts and the upstream's request id (an answer's, or a failure's).
interface Call {
  attempts: number
  requestId: string | null
}

// What the upstream said the call used; `usageSeen` false when a streamed answer carried no count at all.
interface Used {
  usage: Usage
  usageSeen?: boolean
}

// How a call went: one row of the completions table (written in batches by record-writer.ts) and the upstream metrics.
// Returns its cost in micro-dollars: null when its model has no price or the upstream did not say what it used; a call
// that failed before any usage costs what its priced zero tokens do.
export function recordCompletion(c: CompletionContext, outcome: string, call: Call, used?: Used): number | null {
  const { principal } = c.x
  const last = c.tries.at(-1)
  const model = last?.model ?? c.upstreamModel
  const cost = used?.usageSeen === false ? null : c.deps.prices.costMicros(model, used?.usage ?? NONE)
  c.deps.metrics?.upstream(outcome, (performance.now() - c.t0) / 1000)
  if (cost !== null && cost > 0) c.deps.metrics?.spend(model, principal.prefix, cost)
  c.budget.recorded = true
  // A stream that never said what it used keeps its whole reservation.
  c.tokens?.settle(used?.usageSeen === false ? Number.POSITIVE_INFINITY : countedTokens(used?.usage ?? NONE))
  c.deps.recorder.record({
    account_id: principal.accountId,
    key_prefix: principal.prefix,
    model_alias: c.alias,
    upstream_model: model,
    input_tokens: used?.usage.input_tokens ?? 0,
    output_tokens: used?.usage.output_tokens ?? 0,
    cache_read_input_tokens: used?.usage.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: used?.usage.cache_creation_input_tokens ?? 0,
    latency_ms: Math.round(performance.now() - c.t0),
    attempts: call.attempts,
    outcome,
    upstream_request_id: call.requestId,
    upstream: last?.upstream ?? null,
    tries: c.tries,
    created_at: new Date(),
    usage_missing: used?.usageSeen === false,
    cost_micros: cost,
    budget_hold: c.budget.micros,
    budget_month: c.budget.month,
    key_hold: c.budget.keyMicros,
    key_line: c.budget.line,
  })
  return cost
}

const NONE: Usage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }

// The completions table's outcome for a call whose unit was refused while the call was under way.
export const refusedOutcome = (e: unknown) =>
  e instanceof ApiError && (e.code === 'quota_exceeded' || e.code === 'key_quota_exceeded')
    ? e.code
    : 'quota_unavailable'
