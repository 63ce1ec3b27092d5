// A fake Anthropic Messages API answering every call after a fixed delay.
import { createServer } from 'node:http'

const delay = Number(process.argv[2] ?? 20)
const answer = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'claude-bench',
  content: [{ type: 'text', text: 'Hello from the bench.' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 10, output_tokens: 5 },
})
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () =>
    setTimeout(() => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(answer),
        'request-id': 'req_bench',
      })
      res.end(answer)
    }, delay)
  )
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
