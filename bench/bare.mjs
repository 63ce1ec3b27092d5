// The baseline: a bare node:http server answering every request with the same bytes as GET /api/v1/me (on the port
// given second, or any free one).
import { createServer } from 'node:http'

const body = process.argv[2]
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () =>
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
)
