// The floor for an HTTP gateway on this machine: a minimal node:http server relaying each request to the upstream
// through one keep-alive undici Agent, with no auth, validation, quota or recording. A streamed answer
// (text/event-stream) is relayed as it arrives, its bytes untouched, each chunk written as undici hands it over.
import { createServer } from 'node:http'
import { Agent } from 'undici'

const target = process.argv[2]
const agent = new Agent({ keepAliveTimeout: 30_000 })
const server = createServer(async (req, res) => {
  const chunks = []
  for await (const c of req) chunks.push(c)
  const r = await agent.request({
    origin: target,
    path: '/v1/messages',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.concat(chunks),
  })
  if (r.headers['content-type'] === 'text/event-stream') {
    res.writeHead(r.statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.flushHeaders()
    return r.body.pipe(res)
  }
  const body = await r.body.text()
  res
    .writeHead(r.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    .end(body)
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
