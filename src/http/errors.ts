export const statusOf = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_timeout: 408,
  header_too_large: 431,
  bad_request: 400,
  invalid_request: 422,
  invalid_json: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
  upstream_error: 502,
  service_unavailable: 503,
  ai_not_configured: 503,
  upstream_unavailable: 503,
  upstream_timeout: 504,
} as const

export type ErrorCode = keyof typeof statusOf

export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>
  ) {
    super(message)
    this.status = statusOf[code]
  }
}

export interface Issue {
  path: string
  message: string
}

export const invalid = (issues: Issue[]) =>
  new ApiError(
    'invalid_request',
    issues.length === 1 ? `${issues[0].path}: ${issues[0].message}` : `${issues.length} fields are invalid`,
    { issues }
  )
