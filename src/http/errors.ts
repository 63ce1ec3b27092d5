export const statusOf = {
  unauthorized: 401,
  forbidden: 403,
  model_not_allowed: 403,
  not_found: 404,
  model_not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_timeout: 408,
  header_too_large: 431,
  bad_request: 400,
  invalid_request: 422,
  invalid_json: 422,
  idempotency_key_reused: 422,
  captcha_failed: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  key_quota_exceeded: 429,
  budget_exceeded: 429,
  internal_error: 500,
  upstream_error: 502,
  service_unavailable: 503,
  ai_not_configured: 503,
  upstream_unavailable: 503,
  upstream_timeout: 504,
} as const

export type ErrorCode = keyof typeof statusOf

// An error that is an outcome, not a fault (a refusal, an upstream's failure): made without a stack trace, which
// nothing reads (only errors that become a 500 are logged with theirs) and which was a fifth of the CPU of a refused
// request (a 401, a 429). It never calls Error's constructor, where V8 captures the frames: its prototype chain holds
// Error.prototype (so `instanceof Error`, `name` and `toString` are Error's), and its stack is the first line alone.
export class ExpectedError implements Error {
  declare readonly name: string
  constructor(readonly message: string) {}

  get stack() {
    return `${this.name}: ${this.message}`
  }
}
Object.setPrototypeOf(ExpectedError.prototype, Error.prototype)

export interface ApiErrorInit {
  code: ErrorCode
  message: string
  details?: Record<string, unknown>
  headers?: Record<string, string>
}

export class ApiError extends ExpectedError {
  readonly status: number
  readonly code: ErrorCode
  readonly details?: Record<string, unknown>
  readonly headers?: Record<string, string>
  constructor({ code, message, details, headers }: ApiErrorInit) {
    super(message)
    this.code = code
    this.status = statusOf[code]
    this.details = details
    this.headers = headers
  }
}

export interface Issue {
  path: string
  message: string
}

export const invalid = (issues: Issue[]) =>
  new ApiError({
    code: 'invalid_request',
    message: issues.length === 1 ? `${issues[0].path}: ${issues[0].message}` : `${issues.length} fields are invalid`,
    details: { issues },
  })

// The headers HTTP requires or recommends with an error's status, added where every error becomes a response:
// 401 a `WWW-Authenticate` challenge (RFC 6750 §3: no `error` when the request carried no bearer credentials,
// `invalid_request` when it carried two, else `invalid_token`); 429 and 503 a `Retry-After` (RFC 9110 §10.2.3,
// RFC 6585 §4) when the thrower gave none; 405 its `Allow` comes from the router (RFC 9110 §15.5.6).
export function protocolHeaders(e: ApiError, authorization: string | undefined, sentTwice: boolean) {
  const headers: Record<string, string> = { ...e.headers }
  if (e.status === 401) {
    const error = sentTwice
      ? 'invalid_request'
      : authorization !== undefined && /^bearer /i.test(authorization)
        ? 'invalid_token'
        : undefined
    headers['www-authenticate'] = `Bearer realm="studio"${error ? `, error="${error}"` : ''}`
  }
  if ((e.status === 429 || e.status === 503) && headers['retry-after'] === undefined)
    headers['retry-after'] = e.status === 429 ? '60' : '2'
  return headers
}
