// Verifying a delivery (Standard Webhooks): the headers present, the timestamp within 5 minutes of now, one of the
// `v1,` signatures the HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" under the secret, the body an event.
import { StudioError } from './errors.js'
import { equalBytes, hmacSha256 } from './hmac.js'
import type { webhooks } from './openapi.js'

/** An event type the service sends, e.g. `lead.created`: a key of the OpenAPI document's `webhooks` map. */
export type WebhookEventType = keyof webhooks

/** The event of a type (default: of any type), the body the OpenAPI document's `webhooks` map declares for it. */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = {
  [K in T]: webhooks[K]['post']['requestBody']['content']['application/json']
}[T]

export type WebhookVerificationReason = 'missing_header' | 'invalid_timestamp' | 'bad_signature' | 'invalid_payload'

/** A delivery failed verification; `reason` says why (also in `code`). Answer it with a 4xx and do not act on it. */
export class WebhookVerificationError extends StudioError {
  readonly reason: WebhookVerificationReason

  constructor(reason: WebhookVerificationReason, message: string) {
    super({ code: reason, message })
    this.reason = reason
  }
}

/** The request's headers: a fetch `Headers`, or a plain object such as Node.js's `req.headers` (any case). */
export type WebhookHeaders = Pick<Headers, 'get'> | Record<string, string | string[] | undefined>

/** The request's body exactly as received, as text or bytes: not parsed and serialized again. */
export type WebhookBody = string | Uint8Array | ArrayBuffer

export interface VerifyWebhookOptions {
  /** The time the timestamp is checked against; default the current time. */
  now?: Date
}

const TOLERANCE_S = 5 * 60
const SECRET_PREFIX_RE = /^whsec_/
const encoder = new TextEncoder()

function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
  } catch {
    return null
  }
}

function keyOf(secret: string): Uint8Array {
  const text = typeof secret === 'string' ? secret.replace(SECRET_PREFIX_RE, '') : ''
  const key = text === '' ? null : fromBase64(text)
  if (key === null) throw new TypeError('The webhook secret is not base64 (after `whsec_`)')
  return key
}

function header(headers: WebhookHeaders, name: string): string {
  let value: string | string[] | null | undefined
  if (typeof headers.get === 'function') value = (headers as Pick<Headers, 'get'>).get(name)
  else {
    const plain = headers as Record<string, string | string[] | undefined>
    value = plain[Object.keys(plain).find((k) => k.toLowerCase() === name) ?? name]
  }
  if (Array.isArray(value)) value = value.join(', ')
  if (!value) throw new WebhookVerificationError('missing_header', `The ${name} header is missing`)
  return value
}

function checkTimestamp(timestamp: string, now: Date) {
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError('invalid_timestamp', 'The webhook-timestamp header is not a number of seconds')
  }
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp)) > TOLERANCE_S) {
    throw new WebhookVerificationError('invalid_timestamp', 'The webhook-timestamp is more than 5 minutes from now')
  }
}

function signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array {
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const content = new Uint8Array(prefix.length + body.length)
  content.set(prefix)
  content.set(body, prefix.length)
  return content
}

const signed = (signatures: string, expected: Uint8Array) =>
  signatures.split(' ').some((s) => {
    const comma = s.indexOf(',')
    const given = s.slice(0, comma) === 'v1' ? fromBase64(s.slice(comma + 1)) : null
    return given !== null && equalBytes(given, expected)
  })

function eventOf(body: WebhookBody): WebhookEvent {
  let event: unknown
  try {
    event = JSON.parse(typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The body is not JSON')
  }
  const { type, timestamp, data } = (event ?? {}) as Record<string, unknown>
  if (typeof type !== 'string' || typeof timestamp !== 'string' || typeof data !== 'object' || data === null) {
    throw new WebhookVerificationError('invalid_payload', 'The body is not an event ({"type", "timestamp", "data"})')
  }
  return event as WebhookEvent
}

/**
 * Verifies a delivery and returns its event; throws a `WebhookVerificationError` when it is not one the service
 * signed with `secret` (`whsec_…`) in the last 5 minutes. Types added after this client arrive too: switch on
 * `type` with a default. De-duplicate on the `webhook-id` header: a delivery can come more than once.
 */
export function verifyWebhook(
  body: WebhookBody,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {}
): WebhookEvent {
  const key = keyOf(secret)
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  checkTimestamp(timestamp, options.now ?? new Date())
  const bytes = typeof body === 'string' ? encoder.encode(body) : new Uint8Array(body)
  if (!signed(signatures, hmacSha256(key, signedContent(id, timestamp, bytes)))) {
    throw new WebhookVerificationError('bad_signature', 'No webhook-signature matches the body and the secret')
  }
  return eventOf(body)
}
