// The one error type of the library and the kinds a caller can catch. `status` is undefined when no response came
// (connection refused or reset, timeout, the caller's abort).

export interface Issue {
  path: string
  message: string
}

export interface ErrorInit {
  status?: number
  code?: string
  message: string
  details?: Record<string, unknown>
  headers?: Headers
  cause?: unknown
}

export class StudioError extends Error {
  /** The HTTP status; undefined when no response came. */
  readonly status: number | undefined
  /** The Error body's `error.code`, e.g. `rate_limited`; undefined when there was none. */
  readonly code: string | undefined
  /** The Error body's free-form `error.details`. */
  readonly details: Record<string, unknown>
  /** The response's `x-request-id`, to quote when reporting a problem. */
  readonly requestId: string | null
  /** The response headers (empty when no response came). */
  readonly headers: Headers

  constructor(init: ErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = new.target.name
    this.status = init.status
    this.code = init.code
    this.details = init.details ?? {}
    this.headers = init.headers ?? new Headers()
    this.requestId = this.headers.get('x-request-id')
  }
}

/** 401: the API key is missing, malformed, unknown, revoked or expired. */
export class AuthenticationError extends StudioError {}

/**
 * 403 `forbidden`: the API key lacks the scope the operation needs, named by `requiredScope`; or `model_not_allowed`:
 * the key may not call that model alias. Never retried.
 */
export class PermissionDeniedError extends StudioError {
  get requiredScope(): string | null {
    return typeof this.details.required_scope === 'string' ? this.details.required_scope : null
  }
}

/** 400 or 422: the request was refused as sent; `issues` lists what is wrong with which field. */
export class InvalidRequestError extends StudioError {
  get issues(): Issue[] {
    return Array.isArray(this.details.issues) ? (this.details.issues as Issue[]) : []
  }
}

/** 429 `rate_limited`: too many requests with this key; `retryAfter` seconds until a slot frees. */
export class RateLimitError extends StudioError {
  get retryAfter(): number | null {
    return retryAfterOf(this.headers)
  }
}

/**
 * 429 `quota_exceeded` (the account's monthly AI quota) or `key_quota_exceeded` (the key's own monthly cap): used up
 * until `resetsAt` (`code` says which). Never retried.
 */
export class QuotaExceededError extends StudioError {
  get limit(): number | null {
    return typeof this.details.limit === 'number' ? this.details.limit : null
  }
  get used(): number | null {
    return typeof this.details.used === 'number' ? this.details.used : null
  }
  get resetsAt(): string | null {
    return typeof this.details.resets_at === 'string' ? this.details.resets_at : null
  }
}

/** 5xx: the service or the model behind it failed (`upstream_unavailable`, `service_unavailable`, …). */
export class ServerError extends StudioError {}

/** No response: the connection was refused, reset or could not be made. */
export class APIConnectionError extends StudioError {}

/** No response within the timeout. */
export class APITimeoutError extends APIConnectionError {}

/** The caller's AbortSignal aborted the call. Never retried. */
export class APIUserAbortError extends StudioError {}

// Seconds (or an HTTP date) in Retry-After; null when absent or unreadable.
export function retryAfterOf(headers: Headers): number | null {
  const value = headers.get('retry-after')
  if (value === null || value.trim() === '') return null
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds)
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000)
}

// The error for a non-2xx response, by status and code.
export function errorFromResponse(status: number, headers: Headers, body: unknown): StudioError {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error
  const code = typeof error?.code === 'string' ? error.code : undefined
  const message = typeof error?.message === 'string' ? error.message : `${status} status code`
  const details =
    error?.details && typeof error.details === 'object' ? (error.details as Record<string, unknown>) : undefined
  const init = { status, code, message, details, headers }
  if (status === 401) return new AuthenticationError(init)
  if (status === 403) return new PermissionDeniedError(init)
  if (status === 400 || status === 422) return new InvalidRequestError(init)
  if (status === 429)
    return code === 'quota_exceeded' || code === 'key_quota_exceeded'
      ? new QuotaExceededError(init)
      : new RateLimitError(init)
  if (status >= 500) return new ServerError(init)
  return new StudioError(init)
}
