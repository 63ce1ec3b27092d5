import t from 'tap'
import { rawRequest } from '../support/raw.js'
import { startTestServer } from '../support/server.js'

// The headers RFC 6750 and RFC 9110 ask for with an error status, whichever part of the code threw the error.
const s = await startTestServer(t, { STUDIO_RATE_LIMIT: '3' })
const key = await s.key()
const hello = { messages: [{ role: 'user', content: 'Hi' }] }

t.test('401: a Bearer challenge, with an error only when bearer credentials were sent', async (t) => {
  const challenge = async (headers: Record<string, string>) =>
    (await s.fetch('/api/v1/me', { headers })).headers.get('www-authenticate')
  t.equal(await challenge({}), 'Bearer realm="studio"', 'no credentials: no error code (RFC 6750 §3.1)')
  t.equal(await challenge({ authorization: `Basic ${key}` }), 'Bearer realm="studio"', 'another scheme: none')
  t.equal(await challenge({ authorization: 'Bearer nope' }), 'Bearer realm="studio", error="invalid_token"')
  t.equal(await challenge({ authorization: `Bearer ${key}x` }), 'Bearer realm="studio", error="invalid_token"')
  const r = await s.fetch('/api/v1/leads', { method: 'POST', headers: { authorization: 'bearer x' }, json: {} })
  t.equal(r.headers.get('www-authenticate'), 'Bearer realm="studio", error="invalid_token"')
  const port = new URL(s.url).port
  const twice = await rawRequest(
    Number(port),
    `GET /api/v1/me HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\nauthorization: Bearer ${key}\r\n` +
      'connection: close\r\n\r\n'
  )
  t.equal(twice.status, 401)
  t.equal(twice.headers['www-authenticate'], 'Bearer realm="studio", error="invalid_request"')
  t.notOk((await s.fetch('/api/v1/me', { key })).headers.has('www-authenticate'), 'not on a success')
})

t.test('503 and 429 carry Retry-After; 405 carries Allow', async (t) => {
  const down = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  t.equal(down.status, 503)
  t.match(down.headers.get('retry-after'), /^\d+$/)
  const wrong = await s.fetch('/api/v1/me', { method: 'DELETE', key })
  t.equal(wrong.status, 405)
  t.match(wrong.headers.get('allow'), /^GET\b/)
  let r = await s.fetch('/api/v1/me', { key })
  while (r.status !== 429) r = await s.fetch('/api/v1/me', { key })
  t.match(r.headers.get('retry-after'), /^\d+$/)
})
