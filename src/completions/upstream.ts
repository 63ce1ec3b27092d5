import { setTimeout as sleep } from 'node:timers/promises'
import type { Dispatcher } from 'undici'
import type { Config } from '../ops/config.js'
import { ApiError } from '../http/errors.js'

type Alias = 'primary' | 'fast'

export interface CompletionCall {
  model: string
  messages: { role: 'user' | 'assistant'; content: string }[]
  system?: string
  max_tokens: number
  temperature?: number
}

export interface Usage {
  input_tokens: number
  output_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
}

interface Completion {
  model: string
  content: string
  stop_reason: string | null
  usage: Usage
}

interface WireRequest {
  path: string
  headers: Record<string, string>
  body: string
}

// One adapter per upstream wire format: how to ask, how to read the answer, how to read an error.
export interface Adapter {
  name: string
  origin: string
  models: Record<Alias, string>
  notConfigured: string | null
  requestIdHeader: string
  request(call: CompletionCall): WireRequest
  parse(body: unknown): Completion
  errorMessage(body: unknown): string | null
  spendLimit(status: number, body: unknown): boolean
}

export interface Attempted {
  completion: Completion
  requestId: string | null
  attempts: number
}

// A failed upstream call: `api` is what the caller gets; `outcome` what the completions table records.
export class UpstreamFailure extends Error {
  constructor(
    readonly api: ApiError,
    readonly outcome: string,
    readonly attempts: number,
    readonly requestId: string | null = null
  ) {
    super(api.message)
  }
}

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
const MAX_RETRIES = 2
const RETRY_AFTER_CAP_S = 10

export interface CallOptions {
  dispatcher: Dispatcher
  timeoutMs: number
  signal: AbortSignal
  retries?: number
  backoff?: (attempt: number, retryAfterS: number | null) => number
  onAuthFailure?: (status: number) => void
}

const parseRetryAfter = (v: string | string[] | undefined): number | null => {
  const s = Array.isArray(v) ? v[0] : v
  if (!s) return null
  const n = Number(s)
  if (Number.isFinite(n)) return Math.max(0, n)
  const at = Date.parse(s)
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000)
}

export const jitteredBackoff = (attempt: number, retryAfterS: number | null) => {
  const base = 250 * 2 ** attempt
  const jittered = base / 2 + Math.random() * base
  return retryAfterS === null ? jittered : Math.min(retryAfterS, RETRY_AFTER_CAP_S) * 1000 + Math.random() * 100
}

const unavailable = (message: string, retryAfterS: number | null) => {
  const seconds = Math.ceil(Math.min(retryAfterS ?? 5, 60))
  return new ApiError('upstream_unavailable', message, undefined, { 'retry-after': String(seconds) })
}

async function readJson(body: Dispatcher.ResponseData['body']): Promise<unknown> {
  const text = await body.text()
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
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

async function attempts(
  adapter: Adapter,
  wire: WireRequest,
  opts: CallOptions,
  signal: AbortSignal,
  deadline: { aborted: boolean; at: number }
): Promise<Attempted> {
  const retries = opts.retries ?? MAX_RETRIES
  const backoff = opts.backoff ?? jitteredBackoff
  let attempt = 0
  for (;;) {
    attempt++
    let failure: UpstreamFailure
    let retryAfter: number | null = null
    let requestId: string | null = null
    try {
      const res = await opts.dispatcher.request({
        origin: adapter.origin,
        path: wire.path,
        method: 'POST',
        headers: wire.headers,
        body: wire.body,
        signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      })
      const rid = res.headers[adapter.requestIdHeader]
      requestId = typeof rid === 'string' ? rid.slice(0, 200) : null
      const body = await readJson(res.body)
      const status = res.statusCode
      if (status >= 200 && status < 300) {
        try {
          return { completion: adapter.parse(body), requestId, attempts: attempt }
        } catch (e) {
          throw new UpstreamFailure(
            new ApiError('upstream_error', `The upstream answered something we cannot read: ${(e as Error).message}`),
            'upstream_garbage',
            attempt,
            requestId
          )
        }
      }
      const message = adapter.errorMessage(body) ?? `status ${status}`
      if (status === 402 || (status >= 400 && status < 500 && adapter.spendLimit(status, body))) {
        throw new UpstreamFailure(
          unavailable('The upstream spend limit or credit is exhausted', 60),
          'upstream_spend_limit',
          attempt,
          requestId
        )
      }
      if (status === 400 || status === 422) {
        throw new UpstreamFailure(
          new ApiError('invalid_request', `The model refused the request: ${message}`, {
            issues: [{ path: '', message }],
            upstream_status: status,
          }),
          'upstream_invalid_request',
          attempt,
          requestId
        )
      }
      if (status === 401 || status === 403) {
        opts.onAuthFailure?.(status)
        throw new UpstreamFailure(
          new ApiError('upstream_error', 'The upstream refused our credentials'),
          'upstream_auth',
          attempt,
          requestId
        )
      }
      if (!RETRYABLE_STATUS(status)) {
        throw new UpstreamFailure(
          new ApiError('upstream_error', `The upstream answered ${status}: ${message}`),
          'upstream_error',
          attempt,
          requestId
        )
      }
      retryAfter = parseRetryAfter(res.headers['retry-after'])
      failure = new UpstreamFailure(
        unavailable(`The upstream is unavailable (${status}); try again later`, retryAfter),
        'upstream_unavailable',
        attempt,
        requestId
      )
    } catch (e) {
      if (e instanceof UpstreamFailure) throw e
      if (opts.signal.aborted)
        throw new UpstreamFailure(
          new ApiError('upstream_error', 'The client went away'),
          'client_closed',
          attempt,
          requestId
        )
      if (deadline.aborted) {
        throw new UpstreamFailure(
          new ApiError('upstream_timeout', `The upstream did not answer within ${opts.timeoutMs} ms`),
          'upstream_timeout',
          attempt,
          requestId
        )
      }
      const code = (e as { code?: string }).code ?? ''
      if (!CONNECTION_CODES.has(code)) {
        throw new UpstreamFailure(
          new ApiError('upstream_error', 'The upstream call failed'),
          'upstream_error',
          attempt,
          requestId
        )
      }
      failure = new UpstreamFailure(
        unavailable('The upstream is unreachable; try again later', null),
        'upstream_unreachable',
        attempt,
        requestId
      )
    }
    if (attempt > retries) throw failure
    const wait = backoff(attempt - 1, retryAfter)
    if (performance.now() + wait >= deadline.at) throw failure
    try {
      await sleep(wait, undefined, { signal })
    } catch {
      if (opts.signal.aborted)
        throw new UpstreamFailure(new ApiError('upstream_error', 'The client went away'), 'client_closed', attempt)
      throw new UpstreamFailure(
        new ApiError('upstream_timeout', `The upstream did not answer within ${opts.timeoutMs} ms`),
        'upstream_timeout',
        attempt
      )
    }
  }
}

export function notConfigured(adapter: Adapter): ApiError | null {
  return adapter.notConfigured
    ? new ApiError('ai_not_configured', adapter.notConfigured, undefined, { 'retry-after': '3600' })
    : null
}

export type UpstreamConfig = Pick<
  Config,
  | 'STUDIO_UPSTREAM'
  | 'ANTHROPIC_API_KEY'
  | 'ANTHROPIC_BASE_URL'
  | 'OPENAI_BASE_URL'
  | 'OPENAI_API_KEY'
  | 'STUDIO_MODEL_PRIMARY'
  | 'STUDIO_MODEL_FAST'
>

export const int = (n: unknown) =>
  typeof n === 'number' && Number.isInteger(n) && n >= 0 ? Math.min(n, 2 ** 31 - 1) : 0

export function splitBase(url: string): { origin: string; prefix: string } {
  const u = new URL(url)
  return { origin: u.origin, prefix: u.pathname.replace(/\/+$/, '') }
}
