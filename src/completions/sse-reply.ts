import type { ServerResponse } from 'node:http'

const PING_MS = 15_000

// A streamed completion's answer to its client: `200 text/event-stream`, then `delta` events, and `done` or `error`
// last. What is written before `open` (the events that came with the upstream's first chunk, while the quota unit's
// commit was awaited) is held and sent with the headers. A `: ping` comment goes out after at least `pingMs` (and at
// most 1.5 times that) without anything else: a timer ticking twice per period and a flag, not a timer reset per delta.
export class SseReply {
  opened = false
  private held = ''
  private sent = false
  private quiet = 0
  private timer: NodeJS.Timeout | null = null

  constructor(
    private readonly res: ServerResponse,
    private readonly pingMs = PING_MS
  ) {}

  open(common: string[], serverTiming: string) {
    const headers = common.slice()
    const i = headers.indexOf('cache-control')
    if (i !== -1) headers[i + 1] = 'no-cache'
    else headers.push('cache-control', 'no-cache')
    headers.push('content-type', 'text/event-stream', 'x-accel-buffering', 'no', 'server-timing', serverTiming)
    this.res.writeHead(200, headers)
    this.opened = true
    if (this.held) this.res.write(this.held)
    else this.res.flushHeaders()
    this.held = ''
    this.timer = setInterval(() => this.tick(), this.pingMs / 2)
    this.timer.unref()
  }

  delta(text: string) {
    this.write(`event: delta\ndata: {"text":${JSON.stringify(text)}}\n\n`)
  }

  done(completionJson: string) {
    this.end(`event: done\ndata: ${completionJson}\n\n`)
  }

  error(errorJson: string) {
    this.end(`event: error\ndata: ${errorJson}\n\n`)
  }

  cork() {
    if (this.opened) this.res.cork()
  }

  uncork() {
    if (this.opened) this.res.uncork()
  }

  // The reply's end without a last event (its client is gone).
  stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }

  private write(s: string) {
    if (!this.opened) this.held += s
    else {
      this.sent = true
      this.res.write(s)
    }
  }

  private end(s: string) {
    this.stop()
    if (!this.res.destroyed) this.res.end(s)
  }

  private tick() {
    if (this.sent) {
      this.sent = false
      this.quiet = 0
    } else if (++this.quiet >= 2) {
      this.quiet = 0
      this.res.write(': ping\n\n')
    }
  }
}
