// npm run bench, events part: the floor of a webhook delivery's CPU on the sending side. This process POSTs `count`
// signed envelopes (the size of a lead.created body) to the receiver at `url` through an undici Agent, 16 at a time
// over kept-alive connections as the delivery worker does, with no database and nothing else, and prints its own CPU
// per POST (µs) as JSON. Through undici's `dispatch` with a bare handler, the leanest of its APIs (the worker's own).
// Run by bench/events.mjs: node bench/bare-sender.mjs URL COUNT
import { createHmac } from 'node:crypto'
import { Agent } from 'undici'

const [url, count] = [process.argv[2], Number(process.argv[3])]
const { origin, pathname: path } = new URL(url)
const CONCURRENCY = 16
const agent = new Agent({ connections: 16 })
const secret = Buffer.from('whsec-bench-secret-0123456789abcdef')
const envelope = (i) =>
  JSON.stringify({
    type: 'lead.created',
    timestamp: new Date().toISOString(),
    data: {
      id: `0b9c1d2e-0000-4000-8000-${String(i).padStart(12, '0')}`,
      name: `Lead ${i}`,
      email: `lead${i}@example.com`,
      service: 'bench',
      message: 'hello',
      keyPrefix: 'a1b2c3d4',
      createdAt: new Date().toISOString(),
    },
  })

async function post(i) {
  const body = envelope(i)
  const id = `evt_${i}`
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64')
  const statusCode = await new Promise((ok, fail) => {
    let status = 0
    agent.dispatch(
      {
        origin,
        path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': `v1,${signature}`,
        },
        body,
      },
      {
        onConnect() {},
        onHeaders(code) {
          status = code
          return true
        },
        onData: () => true,
        onComplete: () => ok(status),
        onError: fail,
      }
    )
  })
  if (statusCode !== 200) throw new Error(`the receiver answered ${statusCode}`)
}

// A warm-up (JIT, connections), not counted.
for (let i = 0; i < 500; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, (_, j) => post(i + j)))
const before = process.cpuUsage()
let next = 0
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < count) await post(next++)
  })
)
const spent = process.cpuUsage(before)
await agent.close()
console.log(JSON.stringify({ cpuUsPerPost: (spent.user + spent.system) / count }))
