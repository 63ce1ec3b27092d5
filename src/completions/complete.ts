import type { Exchange, Reply } from '../http/route.js'
import type { CompletionRequest } from '../api/schemas.js'
import type { Alias, Attempted, CallBody } from './call.js'
import type { CompletionsDeps } from './completions.js'
import type { CallerProtocol, CompletionContext } from './context.js'
import { recordCompletion, refusedOutcome } from './call-record.js'
import { usd } from '../ops/usd.js'
import { callFailed } from './call-failed.js'
import { CallAbort } from './abort.js'
import { streamCompletion } from './stream-complete.js'
import { allowedAlias } from './aliases.js'
import { noHold, upperBound } from './budget.js'
import { reserveTokens } from './tokens-per-minute.js'

// The header every completion's 200 carries (a whole answer's here, a stream's from sse-reply.ts), documented by
// each completion route.
export const COST_HEADER = {
  description:
    "What the whole answer cost in USD, a decimal string to the micro-dollar, from the upstream's usage and the price " +
    "table; absent when the model has no price. A stream's cost is in its last event (the native route's `done` " +
    'event, `cost_usd`) or, on the OpenAI- and Anthropic-compatible routes, a closing `: x-studio-cost-usd` comment.',
  schema: { type: 'string' },
}

export const SERVER_TIMING = {
  description:
    'Standard Server-Timing: `upstream;dur=<ms>, total;dur=<ms>`; the difference is what the gateway added (for a ' +
    "stream, up to the upstream's first event).",
  schema: { type: 'string' },
}

// What a route asks of the operation: the alias, the call (native, or in the caller's protocol), and for a caller
// of the OpenAI- or Anthropic-compatible routes how its answers are written.
export interface CompletionAsk {
  alias: Alias
  call: CallBody
  stream: boolean
  caller?: CallerProtocol
}

// POST /api/v1/ai/completions: the native body as the call, to a model alias the key may call (403 model_not_allowed
// in the native Error body otherwise).
export function complete(deps: CompletionsDeps, x: Exchange<CompletionRequest>): Promise<Reply> {
  const { messages, system, max_tokens, temperature, stream } = x.body
  const call = stream
    ? { messages, system, max_tokens, temperature, stream: true }
    : { messages, system, max_tokens, temperature }
  return completeCall(deps, x, { alias: allowedAlias(x.body.model, x.principal), call, stream: stream === true })
}

// One completion: its quota ticket, the upstream call with its deadline and retries, the record of how it went, and
// the answer, released only once its quota unit is spent.
export async function completeCall(deps: CompletionsDeps, x: Exchange, ask: CompletionAsk): Promise<Reply> {
  const { principal, res } = x
  const { upstreams } = deps
  const off = upstreams.notConfigured()
  if (off) throw off
  const upstreamModel = upstreams.model(ask.alias)
  // No budget on the account or the key (the cached principal says, within a poll): nothing to reserve, no round trip.
  const budget = principal.budgeted
    ? await deps.budgets.reserve(
        principal.accountId,
        principal.prefix,
        deps.quota.month(),
        upperBound(deps.prices, upstreams.models(ask.alias), ask.call)
      )
    : noHold(principal.accountId, deps.quota.month())
  // The key's tokens per minute (null: no limit); refused, the budget's hold goes back.
  const tokens = await reserveTokens(deps.tokens, principal, ask.call, deps.metrics).catch(async (e) => {
    await deps.budgets.giveBack(budget).catch(() => {})
    throw e
  })
  const abort = new CallAbort()
  const cancel = () => abort.cancel()
  const onClose = () => res.writableFinished || cancel()
  // `on`, not `once` (no wrapper per call): a response closes once; the listener is taken off when the call ends.
  res.on('close', onClose)
  const capped = principal.monthlyCompletions === null ? undefined : principal.countsAs
  const ticket = deps.quota.ticket(principal.accountId, cancel, capped)
  try {
    if (!ticket.overlapped) await ticket.committed()
    const opts = {
      dispatcher: deps.dispatcher,
      timeoutMs: deps.timeoutMs,
      abort,
      log: deps.log,
      backoff: deps.backoff,
      span: x.span,
    }
    const { alias, caller } = ask
    const c: CompletionContext = {
      deps,
      x,
      alias,
      caller,
      ticket,
      budget,
      tokens,
      opts,
      tries: [],
      upstreamModel,
      t0: performance.now(),
    }
    if (ask.stream) return await streamCompletion(c, ask.call)
    return await answerWhole(c, ask.call)
  } finally {
    res.off('close', onClose)
    // Settled by its record already, or no record: no upstream used a token of it.
    tokens?.settle(0)
    await ticket.giveBack()
    await deps.budgets
      .giveBack(budget)
      .catch((e) => deps.log.warn('a budget hold could not be given back', { err: String(e) }))
  }
}

// The whole answer, once the upstream gave it and its unit is spent.
async function answerWhole(c: CompletionContext, call: CallBody): Promise<Reply> {
  let r: Attempted
  try {
    r = await c.deps.upstreams.call(c.alias, call, c.opts, c.tries)
  } catch (e) {
    return await callFailed(c, e)
  }
  const upstreamMs = performance.now() - c.t0
  // The answer waits for its unit: committed, then spent (near the limit, counted first); a refusal meanwhile
  // is the caller's answer instead.
  const completion = r.completion!
  try {
    await c.ticket.spend()
  } catch (refused) {
    recordCompletion(c, refusedOutcome(refused), r, completion)
    throw refused
  }
  const cost = recordCompletion(c, 'ok', r, completion)
  const timing = `upstream;dur=${upstreamMs.toFixed(1)}, total;dur=${(performance.now() - c.x.started).toFixed(1)}`
  const cost_usd = cost === null ? null : usd(cost)
  const body = c.caller ? c.caller.whole(r.protocol, r.body) : { ...completion, cost_usd }
  const headers: Record<string, string> = { 'server-timing': timing }
  if (cost_usd !== null) headers['x-studio-cost-usd'] = cost_usd
  return { status: 200, body, headers }
}
