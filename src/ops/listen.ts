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

// The base URL of `host` and `port`: an IPv6 address goes in brackets (unless it already is).
export function baseUrl(host: string, port: number): string {
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`
}

// The base URL of a TCP listener on `host`, with the port it was given.
export function urlOf(server: Server, host: string): string {
  return baseUrl(host, (server.address() as AddressInfo).port)
}
