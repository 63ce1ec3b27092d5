import type { AddressInfo, Server } from 'node:net'

// Starts a listener and waits until it listens (or fails to: the port is taken, the socket path is not writable).
// `where` is a TCP port and host, or a unix socket path.
export function listen(server: Server, where: { port: number; host: string } | { path: string }): Promise<void> {
  return new Promise<void>((ok, fail) => {
    server.once('error', fail)
    if ('path' in where) server.listen(where.path, ok)
    else server.listen(where.port, where.host, ok)
  })
}

// The base URL of a TCP listener on `host` (an IPv6 address in brackets), with the port it was given.
export function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}
