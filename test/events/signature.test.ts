import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { newSecret, signatureOf, signedHeaders } from '../../src/events/signature.js'

const body = JSON.stringify({ type: 'lead.created', timestamp: new Date().toISOString(), data: { name: 'Ada' } })
const id = 'evt_abc'

t.test('a secret is whsec_ and base64 of 32 random bytes', async (t) => {
  const secret = newSecret()
  t.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/)
  t.equal(Buffer.from(secret.slice(6), 'base64').length, 32)
  t.not(newSecret(), secret)
})

t.test('what the service signs, standardwebhooks verifies', async (t) => {
  const secret = newSecret()
  const headers = signedHeaders([secret], id, Math.floor(Date.now() / 1000), body)
  t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/)
  t.same(new Webhook(secret).verify(body, { ...headers }), JSON.parse(body))
  t.throws(() => new Webhook(newSecret()).verify(body, { ...headers }), 'another secret fails')
  t.throws(() => new Webhook(secret).verify(`${body} `, { ...headers }), 'another body fails')
})

t.test('what standardwebhooks signs, the service signs the same', async (t) => {
  const secret = newSecret()
  const at = new Date()
  const timestamp = Math.floor(at.getTime() / 1000)
  t.equal(signatureOf(secret, id, timestamp, body), new Webhook(secret).sign(id, at, body))
})

t.test('during a rotation both secrets sign, space-separated, and either verifies', async (t) => {
  const [fresh, old] = [newSecret(), newSecret()]
  const headers = signedHeaders([fresh, old], id, Math.floor(Date.now() / 1000), body)
  t.equal(headers['webhook-signature'].split(' ').length, 2)
  for (const secret of [fresh, old]) t.ok(new Webhook(secret).verify(body, { ...headers }))
})
