import { type ApiError, type ErrorCode, statusOf } from '../http/errors.js'
import type { ErrorFormat } from '../http/route.js'
import { anthropicErrorBody, openaiErrorBody } from '../protocols/errors.js'

// A refused quota is a 429 that waiting does not cure: both SDKs retry a 429 unless told not to.
const noRetry = (e: ApiError) =>
  e.code === 'quota_exceeded' || e.code === 'key_quota_exceeded' || e.code === 'budget_exceeded'
    ? { 'x-should-retry': 'false' }
    : undefined

const noRetryHeader = {
  429: {
    'x-should-retry': {
      description:
        '`false` when the quota or budget is used up (`quota_exceeded`, `key_quota_exceeded`, `budget_exceeded`): the SDKs do not retry.',
      schema: { type: 'string', enum: ['false'] },
    },
  },
}

const code = (codes: ErrorCode[]) => ({ type: 'string', enum: codes, description: 'Our error code.' })

// The errors of the OpenAI-compatible routes, in OpenAI's body.
export const openaiErrors: ErrorFormat = {
  status: (code) => statusOf[code],
  reply: (e) => ({ status: e.status, body: JSON.stringify(openaiErrorBody(e)), headers: noRetry(e) }),
  headers: noRetryHeader,
  schema: (codes) => ({
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'code'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string', description: "OpenAI's error type (`invalid_request_error`, …)." },
          param: { type: ['string', 'null'], description: 'The member the error is about, when there is one.' },
          code: code(codes),
        },
      },
    },
  }),
}

// The errors of the Anthropic-compatible routes, in Anthropic's body: no upstream able to answer now (every one
// overloaded, unreachable or cooling down) is Anthropic's 529 overloaded_error, which its SDKs retry.
export const anthropicErrors: ErrorFormat = {
  status: (code) => (code === 'upstream_unavailable' ? 529 : statusOf[code]),
  reply: (e) => {
    const status = anthropicErrors.status(e.code)
    return { status, body: JSON.stringify(anthropicErrorBody({ ...e, status })), headers: noRetry(e) }
  },
  headers: noRetryHeader,
  schema: (codes) => ({
    type: 'object',
    required: ['type', 'error'],
    properties: {
      type: { const: 'error' },
      error: {
        type: 'object',
        required: ['type', 'message', 'code'],
        properties: {
          type: { type: 'string', description: "Anthropic's error type (`invalid_request_error`, …)." },
          message: { type: 'string' },
          code: code(codes),
        },
      },
    },
  }),
}
