import { setTimeout as sleep } from 'node:timers/promises'
import { ApiError } from '../http/errors.js'
import { attempt, clientGone, timedOut } from './attempt.js'
import type { Adapter, Attempted, CallOptions, CompletionCall, WireRequest } from './call.js'

const MAX_RETRIES = 2
const RETRY_AFTER_CAP_S = 10

export const jitteredBackoff = (attempt: number, retryAfterS: number | null) => {
  const base = 250 * 2 ** attempt
  const jittered = base / 2 + Math.random() * base
  return retryAfterS === null ? jittered : Math.min(retryAfterS, RETRY_AFTER_CAP_S) * 1000 + Math.random() * 100
}

// Sends one completion upstream: at most `retries` retries on 429/529/5xx and connection errors, with jittered
// backoff honouring a capped retry-after; never past the deadline; aborted when the caller's signal aborts.
// One controller and one timer per call, both released when it ends (AbortSignal.timeout would hold every
// request's signal for the whole timeout).
export async function callUpstream(adapter: Adapter, call: CompletionCall, opts: CallOptions): Promise<Attempted> {
  const aborter = new AbortController()
  const signal = aborter.signal
  const deadline = { aborted: false, at: performance.now() + opts.timeoutMs }
  const timer = setTimeout(() => ((deadline.aborted = true), aborter.abort()), opts.timeoutMs)
  const onAbort = () => aborter.abort()
  if (opts.signal.aborted) aborter.abort()
  else opts.signal.addEventListener('abort', onAbort, { once: true })
  try {
    return await attempts(adapter, adapter.request(call), opts, signal, deadline)
  } finally {
    clearTimeout(timer)
    opts.signal.removeEventListener('abort', onAbort)
  }
}

// The retry loop: another attempt after a retryable failure, at most `retries` more, each after a backoff that must
// end before the deadline.
async function attempts(
  adapter: Adapter,
  wire: WireRequest,
  opts: CallOptions,
  signal: AbortSignal,
  deadline: { aborted: boolean; at: number }
): Promise<Attempted> {
  const retries = opts.retries ?? MAX_RETRIES
  const backoff = opts.backoff ?? jitteredBackoff
  for (let n = 1; ; n++) {
    const outcome = await attempt(adapter, wire, opts, signal, deadline, n)
    if ('done' in outcome) return outcome.done
    if (n > retries) throw outcome.retry
    const wait = backoff(n - 1, outcome.retryAfter)
    if (performance.now() + wait >= deadline.at) throw outcome.retry
    try {
      await sleep(wait, undefined, { signal })
    } catch {
      const t = { attempt: n, requestId: null }
      throw opts.signal.aborted ? clientGone(t) : timedOut(t, opts.timeoutMs)
    }
  }
}

export function notConfigured(adapter: Adapter): ApiError | null {
  return adapter.notConfigured
    ? new ApiError('ai_not_configured', adapter.notConfigured, undefined, { 'retry-after': '3600' })
    : null
}
