// A webhook receiver for trying Studio's webhooks on one's own machine: Node.js only, no dependency.
//   WEBHOOK_SECRET=whsec_… node contrib/webhook-receiver.mjs [PORT]      (PORT: default 9000; listens on 127.0.0.1)
// Each request is verified as Standard Webhooks says (https://www.standardwebhooks.com): the webhook-id,
// webhook-timestamp and webhook-signature headers present, the timestamp within 5 minutes of now, and one of the
// signatures (`v1,` + base64, space-separated) the HMAC-SHA256 of "<id>.<timestamp>.<body>" under the secret's bytes
// (the base64 after `whsec_`), compared in constant time. A verified event prints `verified <type> <id>` and is
// answered 204; anything else prints `rejected: <why>` and is answered 400, so the sender does not count it delivered.
// The client libraries do the same in one call: verifyWebhook (TypeScript), studio_api.webhooks.verify (Python).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'

const TOLERANCE_S = 5 * 60
const secret = process.env.WEBHOOK_SECRET ?? ''
const port = Number(process.argv[2] ?? 9000)

if (!secret.startsWith('whsec_')) {
  console.error('webhook-receiver: set WEBHOOK_SECRET to the endpoint’s signing secret (whsec_…)')
  process.exit(2)
}
const key = Buffer.from(secret.slice('whsec_'.length), 'base64')

function problem(headers, body) {
  const id = headers['webhook-id']
  const timestamp = headers['webhook-timestamp']
  const signatures = headers['webhook-signature']
  if (!id || !timestamp || !signatures) return 'a webhook-id, webhook-timestamp or webhook-signature header is missing'
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_S)
    return 'the timestamp is not within 5 minutes of now'
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest()
  const matches = signatures.split(' ').some((s) => {
    const [version, value] = s.split(',')
    const given = Buffer.from(value ?? '', 'base64')
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
  })
  return matches ? null : 'no signature matches the secret'
}

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    const why = problem(req.headers, body)
    if (why) {
      console.log(`rejected: ${why}`)
      res.writeHead(400).end()
      return
    }
    const event = JSON.parse(body.toString('utf8'))
    console.log(`verified ${event.type} ${req.headers['webhook-id']}`)
    res.writeHead(204).end()
  })
})

server.listen(port, '127.0.0.1', () => console.log(`webhook-receiver: listening on http://127.0.0.1:${port}/`))
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)))
