// A webhook receiver for trying Studio's webhooks on one's own machine: Node.js only, no dependency.
//   node contrib/webhook-receiver.mjs [PORT [SECRET_FILE]]     (PORT: default 9000; listens on 127.0.0.1)
// The secret is the last line of SECRET_FILE (what `studio webhooks add … > webhook.secret` wrote: the CLI prints the
// signing secret alone on its last line), else WEBHOOK_SECRET.
// Each request is verified as Standard Webhooks says (https://www.standardwebhooks.com): the webhook-id,
// webhook-timestamp and webhook-signature headers present, the timestamp within 5 minutes of now, and one of the
// signatures (`v1,` + base64, space-separated) the HMAC-SHA256 of "<id>.<timestamp>.<body>" under the secret's bytes
// (the base64 after `whsec_`), compared in constant time. A verified event prints `verified <type> <id>` and is
// answered 204; anything else prints `rejected: <why>` and is answered 400, so the sender does not count it delivered.
// The client libraries do the same in one call: verifyWebhook (TypeScript), studio_api.webhooks.verify (Python).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const TOLERANCE_S = 5 * 60
const [portArg, secretFile] = process.argv.slice(2)
const port = Number(portArg ?? 9000)

// A file written by a shell's `>`: Windows PowerShell 5 writes UTF-16 with a byte-order mark.
function lastLine(file) {
  let bytes
  try {
    bytes = readFileSync(file)
  } catch {
    return ''
  }
  const text = bytes[0] === 0xff && bytes[1] === 0xfe ? bytes.subarray(2).toString('utf16le') : bytes.toString('utf8')
  return (
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean)
      .at(-1) ?? ''
  )
}

const secret = secretFile ? lastLine(secretFile) : (process.env.WEBHOOK_SECRET ?? '')
if (!secret.startsWith('whsec_')) {
  console.error(
    secretFile
      ? `webhook-receiver: ${secretFile} does not end with the endpoint’s signing secret (whsec_…)`
      : 'webhook-receiver: name the file holding the signing secret (whsec_…), or set WEBHOOK_SECRET'
  )
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
