import type { Exchange, Reply } from '../http/route.js'
import type { QuotaTicket } from '../quota/ticket-pair.js'
import type { Principal } from '../accounts/auth.js'
import type { CompletionRequest } from '../api/schemas.js'
import { type Attempted, type CompletionCall, UpstreamFailure } from './call.js'
import { type Record, refusedOutcome } from './record.js'
import type { CompletionsDeps } from './completions.js'
import type { Try } from './upstreams.js'
import { CallAbort } from './abort.js'
import { streamWith } from './stream-complete.js'

// One completion: its quota ticket, the upstream call with its deadline and retries, the record of how it went, and
// the answer, released only once its quota unit is spent.
export function completeWith(deps: CompletionsDeps) {
  const { upstreams, recorder, log } = deps
  const onAuthFailure = (status: number, upstream?: string) =>
    log.error(`the ${upstream} upstream refused our credentials (${status}): check the API key setting`, {
      upstream,
      status,
    })
  const { quota } = deps

  const recordFor =
    (principal: Principal, alias: string, upstreamModel: string, t0: number, tries: Try[]): Record =>
    (outcome, attempts, requestId, usage, usageMissing = false) => {
      deps.metrics?.upstream(outcome, (performance.now() - t0) / 1000)
      recorder.record({
        account_id: principal.accountId,
        key_prefix: principal.prefix,
        model_alias: alias,
        upstream_model: tries.at(-1)?.model ?? upstreamModel,
        input_tokens: usage?.input_tokens ?? 0,
        output_tokens: usage?.output_tokens ?? 0,
        cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
        cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
        latency_ms: Math.round(performance.now() - t0),
        attempts,
        outcome,
        upstream_request_id: requestId,
        upstream: tries.at(-1)?.upstream ?? null,
        tries,
        created_at: new Date(),
        usage_missing: usageMissing,
      })
    }

  // A failed upstream call: recorded, and answered with its error, or with the quota's refusal when the reservation
  // that ran alongside it was refused and that is what aborted it (a call that failed on its own keeps its error).
  async function failed(e: unknown, ticket: QuotaTicket, record: Record, tries: Try[]): Promise<never> {
    if (!(e instanceof UpstreamFailure)) throw e
    const refused = e.outcome === 'client_closed' && ticket.overlapped ? await ticket.decision() : null
    record(refused ? refusedOutcome(refused) : e.outcome, e.attempts, e.requestId)
    if (refused) throw refused
    log.warn('upstream call failed', {
      upstream: tries.at(-1)?.upstream,
      outcome: e.outcome,
      attempts: e.attempts,
      upstream_request_id: e.requestId,
    })
    throw e.api
  }

  const stream = streamWith(deps, failed)

  return async function complete(x: Exchange<CompletionRequest>): Promise<Reply> {
    const { principal, body, res, started } = x
    const off = upstreams.notConfigured()
    if (off) throw off
    const upstreamModel = upstreams.model(body.model)
    const abort = new CallAbort()
    const cancel = () => abort.cancel()
    const onClose = () => res.writableFinished || cancel()
    // `on`, not `once` (no wrapper per call): a response closes once; the listener is taken off when the call ends.
    res.on('close', onClose)
    const capped = principal.monthlyCompletions === null ? undefined : principal.countsAs
    const ticket = quota.ticket(principal.accountId, cancel, capped)
    try {
      if (!ticket.overlapped) await ticket.committed()
      const t0 = performance.now()
      const tries: Try[] = []
      const record = recordFor(principal, body.model, upstreamModel, t0, tries)
      const call: Omit<CompletionCall, 'model'> = {
        messages: body.messages,
        system: body.system,
        max_tokens: body.max_tokens,
        temperature: body.temperature,
      }
      const opts = {
        dispatcher: deps.dispatcher,
        timeoutMs: deps.timeoutMs,
        abort,
        onAuthFailure,
        backoff: deps.backoff,
        span: x.span,
      }
      if (body.stream) return await stream(body.model, { ...call, stream: true }, opts, x, ticket, record, tries)
      let r: Attempted
      try {
        r = await upstreams.call(body.model, call, opts, tries)
      } catch (e) {
        return await failed(e, ticket, record, tries)
      }
      const upstreamMs = performance.now() - t0
      // The answer waits for its unit: committed, then spent (near the limit, counted first); a refusal meanwhile
      // is the caller's answer instead.
      const completion = r.completion!
      try {
        await ticket.spend()
      } catch (refused) {
        record(refusedOutcome(refused), r.attempts, r.requestId, completion.usage)
        throw refused
      }
      record('ok', r.attempts, r.requestId, completion.usage)
      const timing = `upstream;dur=${upstreamMs.toFixed(1)}, total;dur=${(performance.now() - started).toFixed(1)}`
      return { status: 200, body: completion, headers: { 'server-timing': timing } }
    } finally {
      res.off('close', onClose)
      await ticket.giveBack()
    }
  }
}
