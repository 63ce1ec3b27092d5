import { Webhook } from 'standardwebhooks'
import type { WebhookVerificationReason } from '../../clients/typescript/src/index.js'
import { newSecret, signedHeaders } from '../../src/events/signature.js'

// Signed deliveries for the clients' webhook verification, made by the service's signer (src/events/signature.ts)
// and by `standardwebhooks` (the Standard Webhooks reference): each with the headers as sent, the time to verify at
// (`now`, Unix seconds) and what the verifier must answer, the event or the reason it refuses. The TypeScript test
// verifies them directly; the Python test is handed them as a JSON file.

export interface WebhookVector {
  name: string
  secret: string
  body: string
  headers: Record<string, string>
  now: number
  /** The reason the delivery must be refused for; absent when it verifies. */
  error?: WebhookVerificationReason
}

const event = (at: Date) => ({
  type: 'lead.created',
  timestamp: at.toISOString(),
  data: {
    name: 'Zoë Ng 🚀',
    email: 'zoe@example.com',
    service: 'web',
    message: 'Hello "there" <b>\n',
    utm: { source: 'ads' },
    id: '0b0f6a52-8d4f-4f39-9d4e-2f0c8a1e6f11',
    createdAt: at.toISOString(),
    keyPrefix: 'sk_live_ab12',
  },
})

type Signer = (secrets: string[], id: string, at: number, body: string) => Record<string, string>

const service: Signer = (secrets, id, at, body) => ({ ...signedHeaders(secrets, id, at, body) })

const reference: Signer = (secrets, id, at, body) => ({
  'webhook-id': id,
  'webhook-timestamp': String(at),
  'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, new Date(at * 1000), body)).join(' '),
})

const without = (headers: Record<string, string>, name: string) =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name))

// Every case, once per signer, at `at` (default the current time).
export function webhookVectors(at = new Date()): WebhookVector[] {
  const now = Math.floor(at.getTime() / 1000)
  const body = JSON.stringify(event(at))
  const [secret, other] = [newSecret(), newSecret()]
  return Object.entries({ service, standardwebhooks: reference }).flatMap(([by, sign]) => {
    const id = `msg_${by}`
    const ok = sign([secret], id, now, body)
    const cases: Omit<WebhookVector, 'now' | 'secret'>[] = [
      { name: 'signed', body, headers: ok },
      { name: 'signed with two secrets (a rotation)', body, headers: sign([other, secret], id, now, body) },
      { name: 'signed 5 minutes ago', body, headers: sign([secret], id, now - 300, body) },
      { name: 'signed 5 minutes ahead', body, headers: sign([secret], id, now + 300, body) },
      { name: 'a tampered body', body: body.replace('Zoë', 'Zoe'), headers: ok, error: 'bad_signature' },
      { name: 'another secret', body, headers: sign([other], id, now, body), error: 'bad_signature' },
      { name: 'another id', body, headers: { ...ok, 'webhook-id': `${id}x` }, error: 'bad_signature' },
      { name: 'signed 5 min 1 s ago', body, headers: sign([secret], id, now - 301, body), error: 'invalid_timestamp' },
      { name: 'signed 1 h ahead', body, headers: sign([secret], id, now + 3600, body), error: 'invalid_timestamp' },
      {
        name: 'a v2 signature',
        body,
        headers: { ...ok, 'webhook-signature': ok['webhook-signature'].replace('v1', 'v2') },
        error: 'bad_signature',
      },
      {
        name: 'a signed body that is not JSON',
        body: 'hello',
        headers: sign([secret], id, now, 'hello'),
        error: 'invalid_payload',
      },
      ...['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => ({
        name: `no ${h}`,
        body,
        headers: without(ok, h),
        error: 'missing_header' as const,
      })),
    ]
    return cases.map((c) => ({ ...c, name: `${by}: ${c.name}`, secret, now }))
  })
}
