import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { recordWebhook } from './responses.js'
import type { Teardown } from './teardown.js'

interface Received {
  headers: IncomingMessage['headers']
  body: string
  path: string
}

type Answer = (req: Received, res: ServerResponse, n: number) => void

// An HTTP receiver on port 0 that records every request and answers as `answer` says (200 by default). Each webhook
// it gets is also recorded for the run's check against the OpenAPI document's `webhooks` map (responses-check.ts).
export async function receiver(t: Teardown, answer: Answer = (_, res) => res.end('ok')) {
  const got: Received[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      const r = { headers: req.headers, body, path: req.url ?? '' }
      got.push(r)
      if (req.headers['webhook-id']) recordWebhook({ headers: req.headers, body })
      answer(r, res, got.length)
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise((ok) => server.close(ok))
  })
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/hook`, got }
}
