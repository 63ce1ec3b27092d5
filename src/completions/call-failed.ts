import { UpstreamFailure } from './call.js'
import type { CompletionContext } from './context.js'
import { recordCompletion, refusedOutcome } from './call-record.js'

// A failed upstream call: recorded, and answered with its error, or with the quota's refusal when the reservation
// that ran alongside it was refused and that is what aborted it (a call that failed on its own keeps its error).
export async function callFailed(c: CompletionContext, e: unknown): Promise<never> {
  if (!(e instanceof UpstreamFailure)) throw e
  const refused = e.outcome === 'client_closed' && c.ticket.overlapped ? await c.ticket.decision() : null
  recordCompletion(c, refused ? refusedOutcome(refused) : e.outcome, e)
  if (refused) throw refused
  c.deps.log.warn('upstream call failed', {
    upstream: c.tries.at(-1)?.upstream,
    outcome: e.outcome,
    attempts: e.attempts,
    upstream_request_id: e.requestId,
  })
  throw e.api
}
