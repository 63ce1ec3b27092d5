// A fake Anthropic Messages API answering every call after a fixed delay (argv[2], ms). A call asking to stream
// (`"stream":true` in its body) gets the Messages stream's real events instead: message_start, content_block_start
// and a ping in the first write (after the delay), then DELTAS (argv[3]) content_block_delta events, or the call's
// max_tokens if fewer, one write each, one every EVERY ms (argv[4]; one ticker for all the streams), then
// content_block_stop, message_delta (stop reason, usage) and message_stop in the last write.
import { createServer } from 'node:http'

const delay = Number(process.argv[2] ?? 20)
const DELTAS = Number(process.argv[3] ?? 200)
const EVERY = Number(process.argv[4] ?? 5)
const answer = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'claude-bench',
  content: [{ type: 'text', text: 'Hello from the bench.' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 10, output_tokens: 5 },
})

const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const head =
  event('message_start', {
    message: {
      ...{ id: 'msg_bench', type: 'message', role: 'assistant', content: [], model: 'claude-bench' },
      ...{ stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
    },
  }) +
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
  event('ping', {})
const WORDS = ['Hello', ' from', ' the', ' bench', ',', ' one', ' piece', ' at', ' a', ' time', '.', ' Über', ' 👋']
const deltas = Array.from({ length: DELTAS }, (_, i) =>
  event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: WORDS[i % WORDS.length] } })
)
// The last write of a stream of n deltas, made once for each n.
const tails = new Map()
function tailOf(n) {
  let tail = tails.get(n)
  if (tail === undefined) {
    tail =
      event('content_block_stop', { index: 0 }) +
      event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: n } }) +
      event('message_stop', {})
    tails.set(n, tail)
  }
  return tail
}

// The streams under way: each gets its next delta at every tick.
const streams = new Set()
let ticker = null
function tick() {
  for (const s of streams) {
    if (s.next < s.n) s.res.write(deltas[s.next++])
    else {
      streams.delete(s)
      s.res.end(tailOf(s.n))
    }
  }
  if (streams.size === 0) {
    clearInterval(ticker)
    ticker = null
  }
}

const server = createServer((req, res) => {
  let body = ''
  req.on('data', (d) => {
    body += d
  })
  req.on('end', () =>
    setTimeout(() => {
      if (!body.includes('"stream":true')) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(answer),
          'request-id': 'req_bench',
        })
        return res.end(answer)
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': 'req_bench',
      })
      res.write(head)
      const maxTokens = Number(JSON.parse(body).max_tokens)
      streams.add({ res, next: 0, n: maxTokens > 0 ? Math.min(DELTAS, maxTokens) : DELTAS })
      ticker ??= setInterval(tick, EVERY)
    }, delay)
  )
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
