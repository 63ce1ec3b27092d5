import { ApiError } from '../http/errors.js'
import { attempt, clientGone, timedOut } from './attempt.js'
import {
  type Adapter,
  type Attempted,
  type CallOptions,
  type CompletionCall,
  type ProtocolCall,
  type WireRequest,
  wireOf,
} from './call.js'

const MAX_RETRIES = 2
const RETRY_AFTER_CAP_S = 10

export const jitteredBackoff = (attempt: number, retryAfterS: number | null) => {
  const base = 250 * 2 ** attempt
  const jittered = base / 2 + Math.random() * base
  return retryAfterS === null ? jittered : Math.min(retryAfterS, RETRY_AFTER_CAP_S) * 1000 + Math.random() * 100
}

// Sends one completion upstream: at most `retries` retries on 429/529/5xx and connection errors, with jittered
// backoff honouring a capped retry-after; never past the deadline; aborted when the caller cancels `opts.abort`.
// The caller's controller is the call's only one; the deadline's timer expires it and is cleared when the call ends
// (AbortSignal.timeout would hold every request's signal for the whole timeout).
export async function callUpstream(
  adapter: Adapter,
  call: CompletionCall | ProtocolCall,
  opts: CallOptions
): Promise<Attempted> {
  const abort = opts.abort
  const timer = setTimeout(() => abort.expire(), opts.timeoutMs)
  try {
    return await attempts(adapter, wireOf(adapter, call), opts, performance.now() + opts.timeoutMs)
  } finally {
    clearTimeout(timer)
  }
}

// The retry loop: another attempt after a retryable failure, at most `retries` more, each after a backoff that must
// end before the deadline.
async function attempts(
  adapter: Adapter,
  wire: WireRequest,
  opts: CallOptions,
  deadlineAt: number
): Promise<Attempted> {
  const retries = opts.retries ?? MAX_RETRIES
  const backoff = opts.backoff ?? jitteredBackoff
  for (let n = 1; ; n++) {
    const outcome = await observed(adapter, wire, opts, n)
    if ('done' in outcome) return outcome.done
    if (n > retries) throw outcome.retry
    const wait = backoff(n - 1, outcome.retryAfter)
    if (performance.now() + wait >= deadlineAt) throw outcome.retry
    try {
      await opts.abort.sleep(wait)
    } catch {
      const t = { attempt: n, requestId: null }
      throw opts.abort.byCaller ? clientGone(t) : timedOut(t, opts.timeoutMs)
    }
  }
}

async function observed(adapter: Adapter, wire: WireRequest, opts: CallOptions, n: number) {
  const onAttempt = opts.onAttempt
  if (!onAttempt) return attempt(adapter, wire, opts, n)
  const t0 = performance.now()
  try {
    const outcome = await attempt(adapter, wire, opts, n)
    onAttempt('done' in outcome ? null : outcome.retry, performance.now() - t0)
    return outcome
  } catch (e) {
    onAttempt(e, performance.now() - t0)
    throw e
  }
}

export function notConfigured(adapter: Adapter): ApiError | null {
  return adapter.notConfigured
    ? new ApiError({ code: 'ai_not_configured', message: adapter.notConfigured, headers: { 'retry-after': '3600' } })
    : null
}
