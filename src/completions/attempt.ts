import { ApiError } from '../http/errors.js'
import { type Adapter, type Attempted, type CallOptions, UpstreamFailure, type WireRequest } from './call.js'
import { type Answer, exchange, FailedAfterSending } from './exchange.js'
import { UpstreamStreamError } from './stream.js'
import type { Span } from '../ops/trace.js'
import { answered, attemptSpan } from './attempt-span.js'

// One attempt of an upstream call, and what its answer or its error means: the completion, a failure worth another
// attempt (an overloaded or unreachable upstream), or a failure that ends the call (thrown).

const BACKSTOP_MS = 1000
const RETRYABLE_STATUS = (s: number) => s === 429 || s === 529 || s >= 500
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])

const unavailable = (message: string, retryAfterS: number | null = null) => {
  const seconds = Math.ceil(Math.min(retryAfterS ?? 5, 60))
  return new ApiError({ code: 'upstream_unavailable', message, headers: { 'retry-after': String(seconds) } })
}

const parseRetryAfter = (s: string | null): number | null => {
  if (!s) return null
  const n = Number(s)
  if (Number.isFinite(n)) return Math.max(0, n)
  const at = Date.parse(s)
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000)
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export type Outcome = { done: Attempted } | { retry: UpstreamFailure; retryAfter: number | null }

interface Try {
  attempt: number
  requestId: string | null
  status?: number
}

const failure = (t: Try, outcome: string, api: ApiError) =>
  new UpstreamFailure(api, { outcome, attempts: t.attempt, requestId: t.requestId, status: t.status })
export const clientGone = (t: Try) =>
  failure(t, 'client_closed', new ApiError({ code: 'upstream_error', message: 'The client went away' }))
export const timedOut = (t: Try, ms: number) =>
  failure(
    t,
    'upstream_timeout',
    new ApiError({ code: 'upstream_timeout', message: `The upstream did not answer within ${ms} ms` })
  )

export async function attempt(adapter: Adapter, wire: WireRequest, opts: CallOptions, n: number): Promise<Outcome> {
  if (!opts.span) return once(adapter, wire, opts, n, wire.headers)
  const span = attemptSpan(opts.span, adapter, wire, n)
  // A streamed answer's span is the stream's to end, once the stream is over (it may be over already).
  let ended = true
  try {
    const headers = { ...wire.headers, traceparent: span.traceparent() }
    const outcome = await once(adapter, wire, opts, n, headers, span)
    if ('retry' in outcome) span.fail(outcome.retry.outcome)
    else if (opts.stream) ended = false
    else answered(span, outcome.done.completion!)
    return outcome
  } catch (e) {
    span.fail(e instanceof UpstreamFailure ? e.outcome : 'upstream_error')
    throw e
  } finally {
    if (ended) span.end()
  }
}

async function once(
  adapter: Adapter,
  wire: WireRequest,
  opts: CallOptions,
  n: number,
  headers: Record<string, string>,
  span?: Span
): Promise<Outcome> {
  const t: Try = { attempt: n, requestId: null }
  try {
    const options = {
      origin: adapter.origin,
      path: wire.path,
      method: 'POST' as const,
      headers,
      body: wire.body,
      // undici's own timeouts only back the call's deadline up (its timers are coarse, ours expires `abort`): one at
      // the same time could win the race and turn a timeout into a retryable connection error (503, not 504).
      headersTimeout: opts.timeoutMs + BACKSTOP_MS,
      bodyTimeout: opts.timeoutMs + BACKSTOP_MS,
    }
    opts.stream?.begin(adapter, span)
    const transport = adapter.transport ?? opts.dispatcher
    const res = await exchange(transport, options, opts.abort, adapter.requestIdHeader, opts.stream)
    t.requestId = res.requestId === null ? null : res.requestId.slice(0, 200)
    t.status = res.statusCode
    return judgeAnswer(adapter, res, t, opts)
  } catch (e) {
    return judgeError(e, t, opts)
  }
}

// The body is parsed only when it is read: a streamed answer's went to the stream (its text is empty).
function judgeAnswer(adapter: Adapter, res: Answer, t: Try, opts: CallOptions): Outcome {
  const status = res.statusCode
  const ok = status >= 200 && status < 300
  const { protocol } = adapter
  if (ok && opts.stream) return { done: { completion: null, protocol, requestId: t.requestId, attempts: t.attempt } }
  const body = parseJson(res.text)
  if (ok) {
    try {
      const completion = adapter.parse(body)
      return { done: { completion, body, protocol, requestId: t.requestId, attempts: t.attempt } }
    } catch (e) {
      const message = `The upstream answered something we cannot read: ${(e as Error).message}`
      throw failure(t, 'upstream_garbage', new ApiError({ code: 'upstream_error', message }))
    }
  }
  const message = adapter.errorMessage(body) ?? `status ${status}`
  if (status === 402 || (status >= 400 && status < 500 && adapter.spendLimit(status, body)))
    throw failure(t, 'upstream_spend_limit', unavailable('The upstream spend limit or credit is exhausted', 60))
  if (status === 400 || status === 422) {
    const details = { issues: [{ path: '', message }], upstream_status: status }
    const refused = new ApiError({
      code: 'invalid_request',
      message: `The model refused the request: ${message}`,
      details,
    })
    throw failure(t, 'upstream_invalid_request', refused)
  }
  if (status === 401 || status === 403) {
    opts.log?.error(`the ${adapter.name} upstream refused our credentials (${status}): check the API key setting`, {
      upstream: adapter.name,
      status,
    })
    throw failure(
      t,
      'upstream_auth',
      new ApiError({ code: 'upstream_error', message: 'The upstream refused our credentials' })
    )
  }
  if (!RETRYABLE_STATUS(status))
    throw failure(
      t,
      'upstream_error',
      new ApiError({ code: 'upstream_error', message: `The upstream answered ${status}: ${message}` })
    )
  const retryAfter = parseRetryAfter(res.retryAfter)
  const busy = unavailable(`The upstream is unavailable (${status}); try again later`, retryAfter)
  return { retry: failure(t, 'upstream_unavailable', busy), retryAfter }
}

// A connection error is another attempt only when the request never wholly reached the socket (refused, unreachable,
// reset while it was written): one that broke after the upstream may have read the request is not sent again, here
// or to the next upstream, since the upstream may have answered and billed it.
function judgeError(e: unknown, t: Try, opts: CallOptions): Outcome {
  if (e instanceof UpstreamFailure) throw e
  if (opts.abort.byCaller) throw clientGone(t)
  if (opts.abort.byDeadline) throw timedOut(t, opts.timeoutMs)
  const sent = e instanceof FailedAfterSending
  const cause = sent ? e.cause : e
  if (cause instanceof UpstreamStreamError && cause.retryable) {
    const busy = unavailable('The upstream is unavailable (its stream said so); try again later')
    return { retry: failure(t, 'upstream_unavailable', busy), retryAfter: null }
  }
  if (!CONNECTION_CODES.has((cause as { code?: string }).code ?? ''))
    throw failure(t, 'upstream_error', new ApiError({ code: 'upstream_error', message: 'The upstream call failed' }))
  if (sent) {
    const message = 'The connection to the upstream broke after it was sent the request, which was not sent again'
    throw failure(t, 'upstream_broke_off', new ApiError({ code: 'upstream_error', message }))
  }
  const unreachable = unavailable('The upstream is unreachable; try again later')
  return { retry: failure(t, 'upstream_unreachable', unreachable), retryAfter: null }
}
