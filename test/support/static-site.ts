import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

interface Teardown {
  teardown(fn: () => Promise<void>): void
}

// A static site on port 0, its own origin: every path answers `page()`.
export async function serveStatic(t: Teardown, page: () => string): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page())
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(() => new Promise<void>((ok) => server.close(() => ok())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
