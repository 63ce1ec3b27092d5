import type { Exchange, Reply } from '../http/route.js'
import { ApiError } from '../http/errors.js'
import { errorBody } from '../http/io.js'
import type { QuotaTicket } from '../quota/ticket-pair.js'
import type { CompletionRequest } from '../api/schemas.js'
import type { Attempted, CallOptions, CompletionCall } from './call.js'
import type { CompletionsDeps } from './completions.js'
import type { Try } from './upstreams.js'
import { type Record, refusedOutcome } from './record.js'
import { SseReply } from './sse-reply.js'
import { UpstreamStream, UpstreamStreamError } from './stream.js'

type Failed = (e: unknown, ticket: QuotaTicket, record: Record, tries: Try[]) => Promise<never>

// What the completions table records, and the client's `error` event says, of a stream that failed once begun.
function brokenStream(e: unknown): { outcome: string; api: ApiError } {
  if (e instanceof UpstreamStreamError)
    return { outcome: 'upstream_error', api: new ApiError('upstream_error', e.message) }
  if (e instanceof SyntaxError) {
    const message = `The upstream answered something we cannot read: ${e.message}`
    return { outcome: 'upstream_garbage', api: new ApiError('upstream_error', message) }
  }
  const api = new ApiError('upstream_error', 'The upstream stream broke off')
  return { outcome: 'upstream_unreachable', api }
}

const asApiError = (e: unknown) =>
  e instanceof ApiError ? e : new ApiError('service_unavailable', 'The quota could not be counted; try again later')

// A streamed completion. Until the upstream's first event it is the ordinary call (its errors are JSON answers, the
// retries apply); then the 200 goes out once the quota unit is committed, each piece of text as it is parsed, and
// `done` (the CompletionResponse) or `error` last. The unit is spent at the first delta (before it, a failure gives
// it back); a client that goes away aborts the upstream call and the record says `client_closed`.
export function streamWith(deps: CompletionsDeps, failed: Failed) {
  return async function stream(
    alias: CompletionRequest['model'],
    call: Omit<CompletionCall, 'model'>,
    opts: CallOptions,
    { res, headers, started }: Exchange<CompletionRequest>,
    ticket: QuotaTicket,
    record: Record,
    tries: Try[]
  ): Promise<Reply> {
    const reply = new SseReply(res, deps.pingMs)
    let spending: Promise<void> | null = null
    const upstream = new UpstreamStream(reply, () => {
      spending = ticket.spend()
      spending.catch(() => {})
    })
    const t0 = performance.now()
    let r: Attempted
    try {
      r = await deps.upstreams.call(alias, call, { ...opts, stream: upstream }, tries)
    } catch (e) {
      return await failed(e, ticket, record, tries)
    }
    const { streamed } = upstream
    const done = (outcome: string) => record(outcome, r.attempts, r.requestId, streamed.usage, !streamed.usageSeen)
    try {
      await ticket.committed()
    } catch (refused) {
      opts.abort.cancel()
      done(refusedOutcome(refused))
      throw refused
    }
    // As the whole answer's, but the upstream's part ends at its first event.
    const now = performance.now()
    const timing = `upstream;dur=${(now - t0).toFixed(1)}, total;dur=${(now - started).toFixed(1)}`
    if (!res.destroyed) reply.open(headers, timing)
    try {
      await upstream.ended
      await (spending ?? ticket.spend())
    } catch (e) {
      reply.stop()
      if (opts.abort.byCaller) {
        done('client_closed')
        return { status: 200 }
      }
      const refused = ticket.state === 'refused' ? ticket.refusal : null
      const broken = refused ? { outcome: refusedOutcome(refused), api: asApiError(refused) } : brokenStream(e)
      done(broken.outcome)
      deps.log.warn('upstream stream failed', {
        upstream: tries.at(-1)?.upstream,
        outcome: broken.outcome,
        upstream_request_id: r.requestId,
      })
      reply.error(errorBody(broken.api))
      return { status: 200 }
    }
    done('ok')
    const { model, stop_reason, usage } = streamed
    reply.done(JSON.stringify({ model, content: upstream.content, stop_reason, usage }))
    return { status: 200 }
  }
}
