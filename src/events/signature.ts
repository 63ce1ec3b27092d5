import { createHmac, randomBytes } from 'node:crypto'

// Standard Webhooks signing: `whsec_` + base64 of the key bytes; a signature is `v1,` + base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>" under that key, several (one per valid secret) separated by spaces.

const PREFIX = 'whsec_'
const SECRET_BYTES = 32

export const newSecret = () => PREFIX + randomBytes(SECRET_BYTES).toString('base64')

const keyOf = (secret: string) =>
  Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64')

export const signatureOf = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`

export interface SignedHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

export function signedHeaders(secrets: string[], id: string, timestamp: number, body: string): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signatureOf(s, id, timestamp, body)).join(' '),
  }
}
