import type { ServerResponse } from 'node:http'

const PING_MS = 15_000

// The clock and the timer a reply's pings run on (tests pass their own).
export interface PingClock {
  now(): number
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

const realClock: PingClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
}

// A streamed completion's answer to its client: `200 text/event-stream`, then `delta` events, and `done` or `error`
// last. What is written before `open` (the events that came with the upstream's first chunk, while the quota unit's
// commit was awaited) is held and sent with the headers. A `: ping` comment goes out `pingMs` after the last thing
// sent, ping included: each write notes the time, and one timer, due at the earliest moment a ping could be owed,
// either sends it or sets itself again for the rest of the silence (no timer reset per delta).
export class SseReply {
  opened = false
  private held = ''
  private last = 0
  private timer: unknown = null

  constructor(
    private readonly res: ServerResponse,
    private readonly pingMs = PING_MS,
    private readonly clock: PingClock = realClock
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
    this.last = this.clock.now()
    this.arm(this.pingMs)
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

  // Events already in the SSE text of the caller's protocol.
  events(text: string) {
    this.write(text)
  }

  // The reply's end without a last event (its client is gone).
  stop() {
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.timer = null
  }

  private write(s: string) {
    if (!this.opened) this.held += s
    else {
      this.last = this.clock.now()
      this.res.write(s)
    }
  }

  end(s: string) {
    this.stop()
    if (!this.res.destroyed) this.res.end(s)
  }

  private arm(ms: number) {
    this.timer = this.clock.setTimeout(this.due, ms)
  }

  private due = () => {
    const quiet = this.clock.now() - this.last
    if (quiet < this.pingMs) return this.arm(this.pingMs - quiet)
    this.res.write(': ping\n\n')
    this.last = this.clock.now()
    this.arm(this.pingMs)
  }
}
