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

export interface SseOptions {
  // The sizes of the pieces the body is written in, in bytes, cycled: boundaries fall inside lines, CRLFs and
  // multi-byte characters.
  sizes?: number[]
  // Awaited after the headers, before the first piece (an upstream slow to start).
  gate?: Promise<unknown>
  // Awaited before each piece once the first `after` bytes are written; the socket is destroyed instead of ending
  // when `die` is set (an upstream that dies mid-stream).
  after?: number
  pause?: () => Promise<unknown>
  die?: boolean
}

// An upstream streaming `body` (server-sent events), each piece its own write a turn of the event loop apart.
export const sse =
  (body: string, o: SseOptions = {}): Behaviour =>
  (req, res) => {
    const bytes = Buffer.from(body)
    const sizes = o.sizes ?? [7, 1, 13, 2, 31]
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.flushHeaders()
    void (async () => {
      await o.gate
      for (let at = 0, i = 0; at < bytes.length; i++) {
        if (o.after !== undefined && at >= o.after) {
          if (o.die) return req.socket.destroy()
          await o.pause?.()
        }
        if (res.destroyed) return
        const n = sizes[i % sizes.length]
        res.write(bytes.subarray(at, at + n))
        at += n
        await new Promise((ok) => setImmediate(ok))
      }
      res.end()
    })()
  }

const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

// A Messages stream as Anthropic sends it (the same answer as anthropicMessage() with these text blocks): each text
// block in two deltas, a tool_use block between, a ping, usage in message_start and message_delta.
export function anthropicStream(texts = ['Hello', ', world'], usage = true) {
  const start = { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 1 }
  const message = { id: 'msg_01', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5-20250929' }
  let s = event('message_start', {
    type: 'message_start',
    message: { ...message, stop_reason: null, stop_sequence: null, ...(usage ? { usage: start } : {}) },
  })
  texts.forEach((text, i) => {
    const index = i * 2
    if (i > 0) {
      s += event('content_block_start', {
        type: 'content_block_start',
        index: index - 1,
        content_block: { type: 'tool_use', id: 't', name: 'x', input: {} },
      })
      s += event('content_block_delta', {
        type: 'content_block_delta',
        index: index - 1,
        delta: { type: 'input_json_delta', partial_json: '{}' },
      })
      s += event('content_block_stop', { type: 'content_block_stop', index: index - 1 })
    }
    s += event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
    if (i === 0) s += 'event: ping\ndata: {"type": "ping"}\n\n'
    const half = Math.ceil(text.length / 2)
    for (const piece of [text.slice(0, half), text.slice(half)])
      s += event('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: piece },
      })
    s += event('content_block_stop', { type: 'content_block_stop', index })
  })
  s += event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    ...(usage ? { usage: { output_tokens: 5 } } : {}),
  })
  return s + event('message_stop', { type: 'message_stop' })
}

// A chat-completions stream as OpenAI sends it, with CRLF line ends (the same answer as openaiCompletion() with this
// text): the role first, the text in pieces, the finish reason, then the usage chunk (include_usage) and [DONE].
export function openaiStream(pieces = ['Hi', ' there'], usage = true) {
  const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'llama3.2:3b' }
  const chunk = (delta: unknown, finish: string | null) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }], usage: null })}\r\n\r\n`
  let s = chunk({ role: 'assistant', content: '' }, null)
  for (const content of pieces) s += chunk({ content }, null)
  s += chunk({}, 'length')
  const counts = {
    prompt_tokens: 20,
    completion_tokens: 7,
    total_tokens: 27,
    prompt_tokens_details: { cached_tokens: 8 },
  }
  if (usage) s += `data: ${JSON.stringify({ ...head, choices: [], usage: counts })}\r\n\r\n`
  return `${s}data: [DONE]\r\n\r\n`
}

// Tool calls as an upstream makes them: each one's JSON arguments in the pieces a stream sends them in, split
// mid-token (inside a key, inside a string).
export interface ToolCallPieces {
  id: string
  name: string
  pieces: string[]
}

const TWO_TOOL_CALLS: ToolCallPieces[] = [
  { id: 'call_a', name: 'weather', pieces: ['{"ci', 'ty": "Pa', 'ris"}'] },
  { id: 'call_b', name: 'time', pieces: ['{"zo', 'ne": "CET"}'] },
]

// A whole answer of these tool calls, in each protocol.
export const anthropicToolUse = (calls: ToolCallPieces[] = TWO_TOOL_CALLS) =>
  anthropicMessage({
    content: calls.map(({ id, name, pieces }) => ({
      type: 'tool_use',
      id,
      name,
      input: JSON.parse(pieces.join('')),
      caller: { type: 'direct' },
    })),
    stop_reason: 'tool_use',
  })

export const openaiToolCalls = (calls: ToolCallPieces[] = TWO_TOOL_CALLS) =>
  openaiCompletion({
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: calls.map(({ id, name, pieces }) => ({
            id,
            type: 'function',
            function: { name, arguments: pieces.join('') },
          })),
        },
        finish_reason: 'tool_calls',
      },
    ],
  })

// A Messages stream of these tool calls: a tool_use block each, its input in input_json_delta pieces.
export function anthropicToolStream(calls: ToolCallPieces[] = TWO_TOOL_CALLS) {
  const message = { id: 'msg_2', type: 'message', role: 'assistant', content: [], model: 'claude-x' }
  const usage = { input_tokens: 9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 }
  let s = event('message_start', { type: 'message_start', message: { ...message, usage } })
  calls.forEach(({ id, name, pieces }, index) => {
    const block = { type: 'tool_use', id, name, input: {} }
    s += event('content_block_start', { type: 'content_block_start', index, content_block: block })
    for (const partial_json of pieces)
      s += event('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json },
      })
    s += event('content_block_stop', { type: 'content_block_stop', index })
  })
  s += event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 20 },
  })
  return s + event('message_stop', { type: 'message_stop' })
}

// A chat-completions stream of these tool calls: each one's index, id and name first, then its arguments' pieces.
export function openaiToolStream(calls: ToolCallPieces[] = TWO_TOOL_CALLS) {
  const head = { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-x' }
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }], usage: null })}\n\n`
  let s = chunk({ role: 'assistant', content: null })
  calls.forEach(({ id, name, pieces }, index) => {
    s += chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] })
    for (const args of pieces) s += chunk({ tool_calls: [{ index, function: { arguments: args } }] })
  })
  s += chunk({}, 'tool_calls')
  const usage = { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 }
  return `${s}data: ${JSON.stringify({ ...head, choices: [], usage })}\n\ndata: [DONE]\n\n`
}
