import { type AddressInfo, createServer, type Server } from 'node:net'
import { Refused } from './refused.js'

// Starts a listener and waits until it listens (or fails to: the port is taken, the socket path is not writable).
// `where` is a TCP port and host, or a unix socket path.
export function listen(server: Server, where: { port: number; host: string } | { path: string }): Promise<void> {
  return new Promise<void>((ok, fail) => {
    server.once('error', fail)
    if ('path' in where) server.listen(where.path, ok)
    else server.listen(where.port, where.host, ok)
  })
}

// A taken PORT, as the one line a start is refused with (the CLI's exit code 2); any other failure as it was.
const takenPort = (e: unknown, port: number, host: string) =>
  (e as { code?: string }).code === 'EADDRINUSE'
    ? new Refused(
        `port ${port} on ${host} is already in use (another server?): set PORT to a free port, or PORT=0 for any`
      )
    : e

// The API listener's port, tried before the database is touched: a taken one is refused at once, not after the
// database's setup. The listen itself maps the same failure (another process may take the port meanwhile).
export async function checkPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return
  const probe = createServer()
  await listen(probe, { port, host }).catch((e) => {
    throw takenPort(e, port, host)
  })
  await new Promise((closed) => probe.close(closed))
}

export const listenApi = (server: Server, port: number, host: string) =>
  listen(server, { port, host }).catch((e) => {
    throw takenPort(e, port, host)
  })

// The base URL of `host` and `port`: an IPv6 address goes in brackets (unless it already is).
export function baseUrl(host: string, port: number): string {
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`
}

// The base URL of a TCP listener on `host`, with the port it was given.
export function urlOf(server: Server, host: string): string {
  return baseUrl(host, (server.address() as AddressInfo).port)
}
