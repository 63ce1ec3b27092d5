import type { Exchange, Reply } from '../http/route.js'
import type { CompletionRequest } from '../api/schemas.js'
import type { Attempted, CompletionCall } from './call.js'
import type { CompletionsDeps } from './completions.js'
import type { CompletionContext } from './context.js'
import { recordCompletion, refusedOutcome } from './call-record.js'
import { callFailed } from './call-failed.js'
import { CallAbort } from './abort.js'
import { streamCompletion } from './stream-complete.js'

// One completion: its quota ticket, the upstream call with its deadline and retries, the record of how it went, and
// the answer, released only once its quota unit is spent.
export async function complete(deps: CompletionsDeps, x: Exchange<CompletionRequest>): Promise<Reply> {
  const { principal, body, res } = x
  const { upstreams } = deps
  const off = upstreams.notConfigured()
  if (off) throw off
  const upstreamModel = upstreams.model(body.model)
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
    const c: CompletionContext = { deps, x, ticket, opts, tries: [], upstreamModel, t0: performance.now() }
    const { messages, system, max_tokens, temperature } = body
    if (body.stream) return await streamCompletion(c, { messages, system, max_tokens, temperature, stream: true })
    return await answerWhole(c, { messages, system, max_tokens, temperature })
  } finally {
    res.off('close', onClose)
    await ticket.giveBack()
  }
}

// The whole answer, once the upstream gave it and its unit is spent.
async function answerWhole(c: CompletionContext, call: Omit<CompletionCall, 'model'>): Promise<Reply> {
  let r: Attempted
  try {
    r = await c.deps.upstreams.call(c.x.body.model, call, c.opts, c.tries)
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
  recordCompletion(c, 'ok', r, completion)
  const timing = `upstream;dur=${upstreamMs.toFixed(1)}, total;dur=${(performance.now() - c.x.started).toFixed(1)}`
  return { status: 200, body: completion, headers: { 'server-timing': timing } }
}
