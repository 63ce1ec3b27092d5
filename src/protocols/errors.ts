import { ApiError } from '../http/errors.js'
import type { SseEvent } from './sse-events.js'

// Our errors in each protocol's own body, so that each SDK raises its own typed error (both choose the class by the
// status; the type is what their users read), both carrying our code. An ApiError is one; a route that found every
// upstream overloaded passes status 529 for Anthropic's overloaded_error.
export interface ProtocolError {
  status: number
  code: string
  message: string
  details?: Record<string, unknown>
}

const OPENAI_TYPES: Record<number, string> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
}

const ANTHROPIC_TYPES: Record<number, string> = {
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

// OpenAI names a spent quota insufficient_quota (a 429 its SDKs do not retry), every 5xx server_error.
export function openaiErrorType(e: ProtocolError): string {
  if (e.code === 'quota_exceeded' || e.code === 'key_quota_exceeded' || e.code === 'budget_exceeded')
    return 'insufficient_quota'
  if (e.status >= 500) return 'server_error'
  return OPENAI_TYPES[e.status] ?? 'invalid_request_error'
}

export const anthropicErrorType = (e: ProtocolError): string =>
  ANTHROPIC_TYPES[e.status] ?? (e.status >= 500 ? 'api_error' : 'invalid_request_error')

// The member a 400 is about: the one refused or invalid member, when there is one.
function paramOf(e: ProtocolError): string | null {
  const refused = e.details?.refused
  if (Array.isArray(refused) && refused.length > 0) return String(refused[0])
  const issues = e.details?.issues
  return Array.isArray(issues) && issues.length === 1 ? String(issues[0].path) : null
}

export const openaiErrorBody = (e: ProtocolError) => ({
  error: { message: e.message, type: openaiErrorType(e), param: paramOf(e), code: e.code },
})

export const anthropicErrorBody = (e: ProtocolError) => ({
  type: 'error',
  error: { type: anthropicErrorType(e), message: e.message, code: e.code },
})

// A failure after the stream began, as each protocol's error event (the SDKs raise it from the stream).
export const openaiStreamError = (e: ProtocolError): SseEvent => ({ data: JSON.stringify(openaiErrorBody(e)) })

export const anthropicStreamError = (e: ProtocolError): SseEvent => ({
  event: 'error',
  data: JSON.stringify(anthropicErrorBody(e)),
})

// The 400 for members one protocol cannot express in the other, naming them.
export const untranslatable = (refused: string[], to: 'OpenAI' | 'Anthropic') =>
  new ApiError({
    code: 'bad_request',
    message: `${refused.length === 1 ? 'This member has' : 'These members have'} no ${to} equivalent: ${refused.join(', ')}`,
    details: { refused },
  })

// An upstream's error event in the middle of a stream, in our terms.
export const upstreamStreamFailure = (message: unknown): ProtocolError => ({
  status: 502,
  code: 'upstream_error',
  message: `The upstream failed: ${String(message ?? 'error').slice(0, 1000)}`,
})
