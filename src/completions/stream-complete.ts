import type { Reply } from '../http/route.js'
import { ApiError } from '../http/errors.js'
import { errorBody } from '../http/io.js'
import type { Attempted, CallBody } from './call.js'
import type { CompletionContext } from './context.js'
import { callFailed } from './call-failed.js'
import { recordCompletion, refusedOutcome } from './call-record.js'
import { usd } from '../ops/usd.js'
import { SseReply } from './sse-reply.js'
import { UpstreamStream, UpstreamStreamError } from './stream.js'

// What the completions table records, and the client's `error` event says, of a stream that failed once begun.
function brokenStream(e: unknown): { outcome: string; api: ApiError } {
  if (e instanceof UpstreamStreamError)
    return { outcome: 'upstream_error', api: new ApiError({ code: 'upstream_error', message: e.message }) }
  if (e instanceof SyntaxError) {
    const message = `The upstream answered something we cannot read: ${e.message}`
    return { outcome: 'upstream_garbage', api: new ApiError({ code: 'upstream_error', message }) }
  }
  const api = new ApiError({ code: 'upstream_error', message: 'The upstream stream broke off' })
  return { outcome: 'upstream_unreachable', api }
}

const asApiError = (e: unknown) =>
  e instanceof ApiError
    ? e
    : new ApiError({ code: 'service_unavailable', message: 'The quota could not be counted; try again later' })

// A streamed completion. Until the upstream's first event it is the ordinary call (its errors are JSON answers, the
// retries apply); then the 200 goes out once the quota unit is committed, each piece of text as it is parsed, and
// `done` (the CompletionResponse) or `error` last. The unit is spent at the first delta (before it, a failure gives
// it back); a client that goes away aborts the upstream call and the record says `client_closed`.
export async function streamCompletion(c: CompletionContext, call: CallBody): Promise<Reply> {
  const { deps, ticket, opts, x } = c
  const reply = new SseReply(x.res, deps.pingMs)
  let spending: Promise<void> | null = null
  const upstream = new UpstreamStream(
    reply,
    () => {
      spending = ticket.spend()
      spending.catch(() => {})
    },
    c.caller
  )
  const t0 = performance.now()
  let r: Attempted
  try {
    r = await deps.upstreams.call(c.alias, call, { ...opts, stream: upstream }, c.tries)
  } catch (e) {
    return await callFailed(c, e)
  }
  const { streamed } = upstream
  try {
    await ticket.committed()
  } catch (refused) {
    opts.abort.cancel()
    recordCompletion(c, refusedOutcome(refused), r, streamed)
    throw refused
  }
  // As the whole answer's, but the upstream's part ends at its first event.
  const now = performance.now()
  const timing = `upstream;dur=${(now - t0).toFixed(1)}, total;dur=${(now - x.started).toFixed(1)}`
  if (!x.res.destroyed) reply.open(x.headers, timing)
  try {
    await upstream.ended
    await (spending ?? ticket.spend())
  } catch (e) {
    reply.stop()
    if (opts.abort.byCaller) {
      recordCompletion(c, 'client_closed', r, streamed)
      return { status: 200 }
    }
    const refused = ticket.state === 'refused' ? ticket.refusal : null
    const broken = refused ? { outcome: refusedOutcome(refused), api: asApiError(refused) } : brokenStream(e)
    recordCompletion(c, broken.outcome, r, streamed)
    deps.log.warn('upstream stream failed', {
      upstream: c.tries.at(-1)?.upstream,
      outcome: broken.outcome,
      upstream_request_id: r.requestId,
    })
    if (c.caller) reply.end(c.caller.errorEvent(broken.api))
    else reply.error(errorBody(broken.api))
    return { status: 200 }
  }
  const cost = recordCompletion(c, 'ok', r, streamed)
  const cost_usd = cost === null ? null : usd(cost)
  // A caller's protocol's stream has had its last event (the relay wrote it): the cost follows as a comment, which
  // the SDKs skip.
  if (c.caller) {
    reply.end(cost_usd === null ? '' : `: x-studio-cost-usd ${cost_usd}\n\n`)
    return { status: 200 }
  }
  const { model, stop_reason, usage } = streamed
  reply.done(JSON.stringify({ model, content: upstream.content, stop_reason, usage, cost_usd }))
  return { status: 200 }
}
