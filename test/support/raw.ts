import { connect, type Socket } from 'node:net'
import { recordResponse } from './responses.js'

// A raw HTTP/1.1 exchange over one TCP connection, for what fetch will not send: truncated bodies, lying
// Content-Length, duplicate headers, malformed request lines, slow clients.

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
  // The server closed (or reset) the connection before `timeoutMs`.
  closed: boolean
  // Milliseconds from the first byte written to the end of the response.
  ms: number
}

export interface RawOptions {
  // Keep writing these pieces, one every `intervalMs`, until the server answers (slowloris).
  drip?: { piece: string; intervalMs: number }
  // Half-close after writing (the client says it has no more to send).
  end?: boolean
  // Give up waiting after this long; the result then has closed: false.
  timeoutMs?: number
}

export function rawRequest(
  port: number,
  data: string | Buffer | (string | Buffer)[],
  opts: RawOptions = {}
): Promise<RawResponse> {
  const { timeoutMs = 10_000 } = opts
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1')
    const started = performance.now()
    let received = Buffer.alloc(0)
    let drip: NodeJS.Timeout | undefined
    let settled = false
    const finish = (closed: boolean) => {
      if (settled) return
      settled = true
      clearInterval(drip)
      clearTimeout(timer)
      socket.destroy()
      const response = parse(received)
      record(data, response)
      resolve({ ...response, closed, ms: performance.now() - started })
    }
    const timer = setTimeout(() => finish(false), timeoutMs)
    socket.on('data', (d) => {
      received = Buffer.concat([received, d])
      const r = parse(received)
      // An answer that keeps the connection open ends the exchange; one with `connection: close` waits for the close.
      if (r.complete && r.headers.connection !== 'close') finish(false)
    })
    socket.on('error', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('connect', () => {
      for (const piece of Array.isArray(data) ? data : [data]) socket.write(piece)
      if (opts.end) socket.end()
      if (opts.drip) {
        const { piece, intervalMs } = opts.drip
        drip = setInterval(() => socket.writable && socket.write(piece), intervalMs)
      }
    })
  })
}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.[01]\r?\n/

// The answer to a request whose request line names a path is recorded (responses.ts); one to bytes that are not a
// request line is not an answer to any path.
function record(data: string | Buffer | (string | Buffer)[], r: ReturnType<typeof parse>) {
  const first = [data].flat()[0]
  const line = REQUEST_LINE.exec(typeof first === 'string' ? first : (first?.toString('latin1') ?? ''))
  if (!line || r.status === 0 || !line[2].startsWith('/')) return
  const contentType = r.headers['content-type'] ?? null
  const { status, headers, body, complete } = r
  recordResponse({ method: line[1], url: line[2], status, contentType, headers, body, complete })
}

function parse(buf: Buffer): { status: number; headers: Record<string, string>; body: string; complete: boolean } {
  const text = buf.toString('latin1')
  const end = text.indexOf('\r\n\r\n')
  if (end === -1) return { status: 0, headers: {}, body: '', complete: false }
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const l of lines) {
    const i = l.indexOf(':')
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
  }
  const bodyBytes = buf.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'))
  const length = headers['content-length'] === undefined ? 0 : Number(headers['content-length'])
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: bodyBytes.subarray(0, length).toString('utf8'),
    complete: bodyBytes.length >= length,
  }
}

export const head = (method: string, path: string, headers: Record<string, string | number> = {}) =>
  `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`

// The Error body and the headers every answer carries; returns error.code.
export function errorCode(r: { status: number; headers: Record<string, string>; body: string }): string {
  if (r.headers['content-type'] !== 'application/json') throw new Error(`not JSON: ${JSON.stringify(r).slice(0, 300)}`)
  const body = JSON.parse(r.body) as { error?: { code?: unknown; message?: unknown } }
  if (typeof body.error?.code !== 'string' || typeof body.error.message !== 'string')
    throw new Error(`not an Error body: ${r.body.slice(0, 300)}`)
  return body.error.code
}
