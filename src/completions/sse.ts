// Server-sent events read incrementally from an upstream body (the WHATWG event-stream format). Lines end with CRLF,
// LF or CR, anywhere in a chunk (a CRLF split across two chunks too); a line is decoded only once it is whole, so a
// UTF-8 character split across chunks is never cut (CR and LF bytes never occur inside one). `id` and `retry` are
// ignored: a one-shot reader needs neither.

const LF = 0x0a
const CR = 0x0d
const COLON = 0x3a
const SPACE = 0x20
const DATA = Buffer.from('data')
const EVENT = Buffer.from('event')

const isField = (line: Buffer, start: number, end: number, name: Buffer) =>
  end - start === name.length && line.compare(name, 0, name.length, start, end) === 0

export class SseParser {
  // The start of a line split across chunks, until its end arrives.
  private rest: Buffer[] | null = null
  private afterCr = false
  private type = ''
  private data = ''
  private hasData = false

  constructor(private readonly onEvent: (type: string, data: string) => void) {}

  push(chunk: Buffer) {
    let from = 0
    if (this.afterCr) {
      this.afterCr = false
      if (chunk.length > 0 && chunk[0] === LF) from = 1
    }
    let lineStart = from
    for (let i = from; i < chunk.length; i++) {
      const b = chunk[i]
      if (b !== LF && b !== CR) continue
      if (this.rest === null) this.line(chunk, lineStart, i)
      else {
        this.rest.push(chunk.subarray(lineStart, i))
        const whole = Buffer.concat(this.rest)
        this.rest = null
        this.line(whole, 0, whole.length)
      }
      if (b === CR) {
        if (i + 1 === chunk.length) this.afterCr = true
        else if (chunk[i + 1] === LF) i++
      }
      lineStart = i + 1
    }
    // A copy: undici may reuse the chunk's memory once this returns.
    if (lineStart < chunk.length) (this.rest ??= []).push(Buffer.from(chunk.subarray(lineStart)))
  }

  private line(buf: Buffer, start: number, end: number) {
    if (start === end) return this.dispatch()
    if (buf[start] === COLON) return
    let colon = buf.indexOf(COLON, start)
    if (colon === -1 || colon > end) colon = end
    let valueStart = colon + 1
    if (valueStart < end && buf[valueStart] === SPACE) valueStart++
    if (valueStart > end) valueStart = end
    if (isField(buf, start, colon, DATA)) {
      const value = buf.toString('utf8', valueStart, end)
      this.data = this.hasData ? `${this.data}\n${value}` : value
      this.hasData = true
    } else if (isField(buf, start, colon, EVENT)) this.type = buf.toString('utf8', valueStart, end)
  }

  private dispatch() {
    const { type, data, hasData } = this
    this.type = ''
    this.data = ''
    this.hasData = false
    if (hasData) this.onEvent(type || 'message', data)
  }
}
