import type { Dispatcher } from 'undici'
import type { Handler, Transport } from '../ops/transport.js'
import type { CallAbort } from './abort.js'
import { type UpstreamStream, UpstreamStreamError } from './stream.js'

// One upstream HTTP exchange through undici's `dispatch`, its answer collected whole: the status, the two headers an
// attempt reads, and the body as text; or, for a streamed call's 2xx, its body pushed to the stream as it arrives, the
// answer (without text) given at the stream's first event. Not undici's `request` API: for a body read whole anyway,
// that makes an AsyncResource, a Readable stream and a parsed object of every header per call.

export interface Answer {
  statusCode: number
  requestId: string | null
  retryAfter: string | null
  text: string
}

type Options = Omit<Dispatcher.DispatchOptions, 'signal'>

// A dispatch's failure after the whole request was handed to its socket: the upstream may have read it, answered
// it and billed it, so it is not sent again (attempt.ts). `cause` is the failure itself.
export class FailedAfterSending extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message)
  }
}

// The error a dispatch fails with when `abort` ends it (the attempt reads `abort` itself to say whose abort it was).
const aborted = () => Object.assign(new Error('The upstream call was aborted'), { code: 'UND_ERR_ABORTED' })

// undici's handler callbacks, in the form its core calls directly (no `onRequestStart`, so no wrapper per call).
class Collector {
  statusCode = 0
  requestId: string | null = null
  retryAfter: string | null = null
  private chunks: Buffer[] = []
  private stop: ((e: Error) => void) | null = null
  // Whether the body goes to `stream`; whether the answer was given (a streamed one, at its first event).
  private streaming = false
  private answered = false
  // Whether the request's body (all of it: it is one buffer) was handed to the socket.
  private sent = false

  constructor(
    private abort: CallAbort,
    private idHeader: string,
    private resolve: (a: Answer) => void,
    private reject: (e: unknown) => void,
    private stream: UpstreamStream | undefined
  ) {}

  private onAbort = () => this.stop?.(aborted())

  onConnect(stop: (e: Error) => void) {
    if (this.abort.aborted) return stop(aborted())
    if (this.stop === null) this.abort.on('abort', this.onAbort)
    this.stop = stop
  }

  onBodySent() {
    this.sent = true
  }

  onHeaders(statusCode: number, raw: Buffer[]) {
    if (statusCode < 200) return true
    this.statusCode = statusCode
    for (let i = 0; i < raw.length; i += 2) {
      const n = raw[i].length
      if (n !== this.idHeader.length && n !== 11) continue
      const name = raw[i].toString('latin1').toLowerCase()
      if (name === this.idHeader) this.requestId ??= raw[i + 1].toString()
      else if (name === 'retry-after') this.retryAfter ??= raw[i + 1].toString('latin1')
    }
    this.streaming = this.stream !== undefined && statusCode < 300
    return true
  }

  onData(chunk: Buffer) {
    if (!this.streaming) {
      this.chunks.push(chunk)
      return true
    }
    const stream = this.stream!
    stream.push(chunk)
    if (stream.failure) this.stop?.(stream.failure)
    else if (stream.started && !this.answered) this.answer('')
    return true
  }

  onComplete() {
    this.done()
    if (this.streaming) {
      if (this.answered) this.stream!.end()
      else this.reject(new UpstreamStreamError('The upstream stream ended before its first event'))
      return
    }
    const { chunks } = this
    this.answer(chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString())
  }

  onError(e: Error) {
    this.done()
    if (this.answered) this.stream!.fail(e)
    else this.reject(this.sent ? new FailedAfterSending(e) : e)
  }

  private answer(text: string) {
    this.answered = true
    this.resolve({ statusCode: this.statusCode, requestId: this.requestId, retryAfter: this.retryAfter, text })
  }

  private done() {
    this.abort.removeListener('abort', this.onAbort)
    this.stop = null
  }
}

export function exchange(
  dispatcher: Transport,
  opts: Options,
  abort: CallAbort,
  idHeader: string,
  stream?: UpstreamStream
) {
  return new Promise<Answer>((resolve, reject) => {
    const collector = new Collector(abort, idHeader, resolve, reject, stream)
    dispatcher.dispatch(opts, collector as unknown as Handler)
  })
}
