export interface SseEvent {
  event: string
  data: string
}

// The server-sent events of a body, parsed as its bytes arrive (lines end in LF, CRLF or CR; comments skipped).
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let event = ''
  let data: string[] = []
  try {
    for (;;) {
      const { value, done } = await reader.read()
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true })
      for (let end = lineEnd(buffer, done); end !== -1; end = lineEnd(buffer, done)) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1)
        if (line === '') {
          if (data.length) yield { event: event || 'message', data: data.join('\n') }
          event = ''
          data = []
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon === -1 ? line : line.slice(0, colon)
        const v = colon === -1 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1)
        if (field === 'event') event = v
        else if (field === 'data') data.push(v)
      }
      if (done) return
    }
  } finally {
    // Not awaited: a cancel settles only once every branch of a tee'd body is cancelled.
    reader.cancel().catch(() => {})
  }
}

// A CR as the buffer's last character may be the first half of a CRLF: it ends a line only once more text came.
function lineEnd(buffer: string, done: boolean): number {
  const lf = buffer.indexOf('\n')
  const cr = buffer.indexOf('\r')
  if (cr === -1 || (lf !== -1 && lf < cr)) return lf
  return cr === buffer.length - 1 && !done ? -1 : cr
}
