import type * as v from 'valibot'
import type { Json, Ref } from './openapi.js'

const signatureHeaders = [
  ['webhook-id', 'The event’s identifier, the same on every retry: de-duplicate on it.'],
  ['webhook-timestamp', 'Seconds since the Unix epoch when this attempt was signed.'],
  [
    'webhook-signature',
    '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` keyed with the endpoint’s secret ' +
      '(the base64 after `whsec_`); two, space-separated, for 24 h after the secret was rotated.',
  ],
].map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } }))

const descriptionOf = (s: v.GenericSchema) =>
  (s as { pipe?: { type: string; description?: string }[] }).pipe?.find((p) => p.type === 'description')?.description

// One entry of the top-level `webhooks` map: the POST the service makes to an endpoint for that event type.
function webhook(type: string, envelope: v.GenericSchema, ref: Ref): Json {
  return {
    post: {
      operationId: `on${type.replace(/(^|\.)(\w)/g, (_, __, c: string) => c.toUpperCase())}`,
      summary: descriptionOf(envelope) ?? type,
      security: [],
      parameters: signatureHeaders,
      requestBody: { required: true, content: { 'application/json': { schema: ref(envelope) } } },
      responses: {
        200: { description: 'Any 2xx answered within 15 s acknowledges the event; anything else is retried.' },
        410: { description: 'Disables the endpoint and cancels its pending retries.' },
      },
    },
  }
}

// The top-level `webhooks` map (OpenAPI 3.1): each event type's envelope schema (outbox/catalogue.ts) as the POST
// the service makes to an endpoint.
export const webhooksDoc = (webhooks: Record<string, v.GenericSchema>, ref: Ref): Json =>
  Object.fromEntries(Object.entries(webhooks).map(([type, s]) => [type, webhook(type, s, ref)]))
