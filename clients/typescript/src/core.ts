import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  errorFromResponse,
  retryAfterOf,
  StudioError,
} from './errors.js'

export interface RequestOptions {
  /** Milliseconds for each attempt, response body included; default the client's `timeout` (60 000). */
  timeout?: number
  /** Retries after the first attempt; default the client's `maxRetries` (2). */
  maxRetries?: number
  /** Aborts the call, a retry's wait included. */
  signal?: AbortSignal
  /** Headers added to this request. */
  headers?: Record<string, string>
}

export interface Transport {
  baseURL: string
  apiKey: string
  timeout: number
  maxRetries: number
  fetch: typeof fetch
  defaultHeaders: Record<string, string>
}

export interface Request {
  method: 'GET' | 'POST' | 'PATCH'
  path: string
  body?: unknown
  headers?: Record<string, string>
  /** A 2xx answer's body is left unread for the caller (server-sent events). */
  stream?: boolean
}

export interface RawResult<T> {
  data: T
  response: Response
  requestId: string | null
  /** A streamed answer's: closes its connection. */
  close?: () => void
}

// Backoff before retry `n` (0-based): 0.5 s doubling, at most 8 s, minus up to 25 % jitter. A Retry-After the
// server sent is used as it is, up to RETRY_AFTER_CAP_S; longer, the error is raised instead of waiting.
const INITIAL_S = 0.5
const MAX_S = 8
const RETRY_AFTER_CAP_S = 60
const backoffMs = (n: number) => Math.min(INITIAL_S * 2 ** n, MAX_S) * (1 - Math.random() * 0.25) * 1000

// Milliseconds to wait before retrying after `error`, or null when it must not be retried.
export function retryDelayMs(error: StudioError, n: number): number | null {
  if (error instanceof APIUserAbortError) return null
  if (error.status !== undefined && !retryableStatus(error.status, error.code)) return null
  const after = retryAfterOf(error.headers)
  if (after === null) return backoffMs(n)
  return after > RETRY_AFTER_CAP_S ? null : after * 1000
}

const retryableStatus = (status: number, code: string | undefined) =>
  status === 408 || status === 409 || (status === 429 && code === 'rate_limited') || (status >= 500 && status !== 501)

function sleep(ms: number, signal: AbortSignal | undefined) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal))
    const onAbort = () => {
      clearTimeout(timer)
      reject(aborted(signal!))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

const aborted = (signal: AbortSignal) =>
  new APIUserAbortError({ message: 'The request was aborted', cause: signal.reason })

// One attempt: the response and its parsed body within `timeout` ms, or the error it amounts to.
async function attempt(t: Transport, req: Request, opts: RequestOptions): Promise<RawResult<unknown>> {
  const controller = new AbortController()
  const timeout = opts.timeout ?? t.timeout
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, timeout)
  const onAbort = () => controller.abort()
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  let streaming = false
  const headers: Record<string, string> = {
    accept: req.stream ? 'text/event-stream' : 'application/json',
    authorization: `Bearer ${t.apiKey}`,
    ...t.defaultHeaders,
    ...req.headers,
    ...opts.headers,
  }
  if (req.body !== undefined) headers['content-type'] = 'application/json'
  try {
    const response = await t.fetch(t.baseURL + req.path, {
      method: req.method,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: controller.signal,
    })
    if (req.stream && response.ok) {
      // The caller's signal still aborts the body; the timeout ends here, at the headers (the first event).
      streaming = true
      const close = () => controller.abort()
      return { data: null, response, requestId: response.headers.get('x-request-id'), close }
    }
    const text = await response.text()
    let data: unknown = null
    try {
      data = text === '' ? null : JSON.parse(text)
    } catch {
      if (response.ok) throw new StudioError({ status: response.status, message: 'The response is not JSON' })
    }
    if (!response.ok) throw errorFromResponse(response.status, response.headers, data)
    return { data, response, requestId: response.headers.get('x-request-id') }
  } catch (e) {
    if (e instanceof StudioError) throw e
    if (opts.signal?.aborted) throw aborted(opts.signal)
    if (timedOut) throw new APITimeoutError({ message: `No response within ${timeout} ms`, cause: e })
    throw new APIConnectionError({ message: `Connection error: ${(e as Error)?.message ?? e}`, cause: e })
  } finally {
    clearTimeout(timer)
    if (!streaming) opts.signal?.removeEventListener('abort', onAbort)
  }
}

// The request with its retries: every attempt sends the same headers (an Idempotency-Key included).
export async function send(t: Transport, req: Request, opts: RequestOptions = {}): Promise<RawResult<unknown>> {
  const maxRetries = opts.maxRetries ?? t.maxRetries
  for (let n = 0; ; n++) {
    try {
      return await attempt(t, req, opts)
    } catch (e) {
      const error = e as StudioError
      const wait = n < maxRetries ? retryDelayMs(error, n) : null
      if (wait === null) throw error
      await sleep(wait, opts.signal)
    }
  }
}
