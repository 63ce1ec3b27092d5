export {
  APIPromise,
  type Caller,
  type ClientOptions,
  type CompletionRequest,
  type CompletionResponse,
  type Lead,
  type LeadCreated,
  type LeadInput,
  type LeadListQuery,
  type LeadNote,
  type LeadPage,
  type LeadUpdate,
  type LeadOptions,
  type OpenApiDocument,
  Studio,
  type WithRequestId,
} from './client.js'
export { type CompletionStreamEvent, CompletionStream } from './completion-stream.js'
export type { RawResult, RequestOptions } from './core.js'
export {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  InvalidRequestError,
  PermissionDeniedError,
  type Issue,
  QuotaExceededError,
  RateLimitError,
  ServerError,
  StudioError,
} from './errors.js'
export type { components, operations, paths, webhooks } from './openapi.js'
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookBody,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhooks.js'
