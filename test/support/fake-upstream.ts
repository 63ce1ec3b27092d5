import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Teardown } from './teardown.js'

interface Seen {
  method: string
  path: string
  headers: IncomingMessage['headers']
  body: any
  aborted: boolean
}

type Behaviour = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void

// A real HTTP server speaking an upstream's wire format. Each request takes the next queued behaviour, or the
// default one; every request is recorded as it arrived.
export async function fakeUpstream(t: Teardown, fallback: Behaviour) {
  const seen: Seen[] = []
  const queue: Behaviour[] = []
  const closed: Promise<void>[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString()
      const s: Seen = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
        aborted: false,
      }
      seen.push(s)
      closed.push(
        new Promise((ok) =>
          res.once('close', () => {
            s.aborted = !res.writableFinished
            ok()
          })
        )
      )
      ;(queue.shift() ?? fallback)(req, res, s)
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(
    () =>
      new Promise<void>((ok) => {
        server.closeAllConnections()
        server.close(() => ok())
      })
  )
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    seen,
    next(...b: Behaviour[]) {
      queue.push(...b)
    },
    settled: () => Promise.all(closed),
    reset() {
      seen.length = 0
      queue.length = 0
    },
  }
}

export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Behaviour =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
  }

export const hang: Behaviour = () => {}
export const reset: Behaviour = (req) => req.socket.destroy()
export const garbage: Behaviour = (_req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"not json')

export const anthropicMessage = (over: Record<string, unknown> = {}) => ({
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'text', text: 'Hello' },
    { type: 'tool_use', id: 't', name: 'x', input: {} },
    { type: 'text', text: ', world' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 3 },
  ...over,
})

export const openaiCompletion = (over: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'llama3.2:3b',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'length' }],
  usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27, prompt_tokens_details: { cached_tokens: 8 } },
  ...over,
})
