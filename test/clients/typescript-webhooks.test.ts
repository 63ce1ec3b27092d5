import { createHash, createHmac } from 'node:crypto'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { hmacSha256, sha256 } from '../../clients/typescript/src/hmac.js'
import {
  StudioError,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventType,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from '../../clients/typescript/src/index.js'
import type { EventType } from '../../src/outbox/catalogue.js'
import { newSecret, signedHeaders } from '../../src/events/signature.js'
import { webhookVectors } from '../support/webhook-vectors.js'

const at = (seconds: number) => new Date(seconds * 1000)

function refused(t: Test, verify: () => unknown, reason: WebhookVerificationReason) {
  try {
    verify()
  } catch (e) {
    t.type(e, WebhookVerificationError)
    t.type(e, StudioError, 'a StudioError, as everything the client throws')
    t.equal((e as WebhookVerificationError).reason, reason)
    return
  }
  t.fail(`expected ${reason}`)
}

t.test('SHA-256 and HMAC-SHA256 are node:crypto’s', async (t) => {
  for (let n = 0; n < 200; n++) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff)
    t.equal(Buffer.from(sha256(data)).toString('hex'), createHash('sha256').update(data).digest('hex'), `${n} bytes`)
  }
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 300 }), (key, message) => {
      const expected = createHmac('sha256', key).update(message).digest('hex')
      return Buffer.from(hmacSha256(key, message)).toString('hex') === expected
    }),
    { numRuns: 500 }
  )
})

t.test('what the service and standardwebhooks sign, verifies; what they refuse, is refused', async (t) => {
  for (const v of webhookVectors()) {
    const verify = () => verifyWebhook(v.body, v.headers, v.secret, { now: at(v.now) })
    if (v.error) refused(t, verify, v.error)
    else t.same(verify(), JSON.parse(v.body), v.name)
    const skew = Math.abs(Number(v.headers['webhook-timestamp']) - v.now)
    if (skew === 300) continue // at the edge: the reference reads the clock, which may have moved on
    const reference = () => new Webhook(v.secret).verify(v.body, v.headers)
    if (v.error) t.throws(reference, `standardwebhooks refuses it too: ${v.name}`)
    else t.doesNotThrow(reference, `standardwebhooks verifies it too: ${v.name}`)
  }
})

t.test('the body as text or bytes, the headers as Headers or a plain object in any case', async (t) => {
  const secret = newSecret()
  const body = JSON.stringify({ type: 'key.created', timestamp: new Date().toISOString(), data: { prefix: 'sk_1' } })
  const headers = { ...signedHeaders([secret], 'msg_1', Math.floor(Date.now() / 1000), body) }
  const bytes = new TextEncoder().encode(body)
  const plain = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]))
  for (const b of [body, bytes, Buffer.from(body), bytes.buffer]) {
    for (const h of [new Headers(headers), plain, { ...headers, 'webhook-id': [headers['webhook-id']] }]) {
      t.same(verifyWebhook(b, h, secret), JSON.parse(body))
    }
  }
  t.same(verifyWebhook(body, headers, secret.slice('whsec_'.length)), JSON.parse(body), 'the bare base64 too')
})

t.test('refused: the typed error for each reason', async (t) => {
  const secret = newSecret()
  const now = Math.floor(Date.now() / 1000)
  const body = '{"type":"x.y","timestamp":"2026-01-01T00:00:00Z","data":{}}'
  const sign = (b: string, ts = now) => ({ ...signedHeaders([secret], 'msg_1', ts, b) })
  refused(t, () => verifyWebhook(`${body} `, sign(body), secret), 'bad_signature')
  refused(t, () => verifyWebhook(body, sign(body), newSecret()), 'bad_signature')
  refused(t, () => verifyWebhook(body, { ...sign(body), 'webhook-signature': 'v1,!!' }, secret), 'bad_signature')
  refused(t, () => verifyWebhook(body, sign(body, now - 301), secret), 'invalid_timestamp')
  refused(t, () => verifyWebhook(body, { ...sign(body), 'webhook-timestamp': '1e9' }, secret), 'invalid_timestamp')
  refused(t, () => verifyWebhook(body, {}, secret), 'missing_header')
  refused(t, () => verifyWebhook(body, new Headers(), secret), 'missing_header')
  refused(t, () => verifyWebhook('[1]', sign('[1]'), secret), 'invalid_payload')
  refused(t, () => verifyWebhook('{"type":"x"}', sign('{"type":"x"}'), secret), 'invalid_payload')
  refused(t, () => verifyWebhook(Uint8Array.of(0xff), sign('\ufffd'), secret), 'bad_signature')
  t.throws(() => verifyWebhook(body, sign(body), 'whsec_'), TypeError, 'no secret: a configuration error')
  t.throws(() => verifyWebhook(body, sign(body), 'whsec_not base64!'), TypeError)
})

// Compile-time: the client's event types are the catalogue's, read from the generated OpenAPI types.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const sameTypes: Same<WebhookEventType, EventType> = true

t.test('the returned event is typed by the OpenAPI document’s webhooks', async (t) => {
  void sameTypes // checked by the type-checker, not here
  const [signed] = webhookVectors()
  const event: WebhookEvent = verifyWebhook(signed.body, signed.headers, signed.secret)
  if (event.type !== 'lead.created') throw new Error(event.type)
  const lead: WebhookEvent<'lead.created'>['data'] = event.data
  t.match(lead, { keyPrefix: 'sk_live_ab12', name: 'Zoë Ng 🚀', utm: { source: 'ads' } })
})
