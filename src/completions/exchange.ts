import type { Dispatcher } from 'undici'
import type { CallAbort } from './abort.js'

// One upstream HTTP exchange through undici's `dispatch`, its answer collected whole: the status, the two headers an
// attempt reads, and the body as text. Not undici's `request` API: for a body read whole anyway, that makes an
// AsyncResource, a Readable stream and a parsed object of every header per call.

export interface Answer {
  statusCode: number
  requestId: string | null
  retryAfter: string | null
  text: string
}

type Options = Omit<Dispatcher.DispatchOptions, 'signal'>

// The error a dispatch fails with when `abort` ends it (the attempt reads `abort` itself to say whose abort it was).
const aborted = () => Object.assign(new Error('The upstream call was aborted'), { code: 'UND_ERR_ABORTED' })

// undici's handler callbacks, in the form its core calls directly (no `onRequestStart`, so no wrapper per call).
class Collector {
  statusCode = 0
  requestId: string | null = null
  retryAfter: string | null = null
  private chunks: Buffer[] = []
  private stop: ((e: Error) => void) | null = null

  constructor(
    private abort: CallAbort,
    private idHeader: string,
    private resolve: (a: Answer) => void,
    private reject: (e: unknown) => void
  ) {}

  private onAbort = () => this.stop?.(aborted())

  onConnect(stop: (e: Error) => void) {
    if (this.abort.aborted) return stop(aborted())
    if (this.stop === null) this.abort.on('abort', this.onAbort)
    this.stop = stop
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
    return true
  }

  onData(chunk: Buffer) {
    this.chunks.push(chunk)
    return true
  }

  onComplete() {
    this.done()
    const { chunks } = this
    const text = chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString()
    this.resolve({ statusCode: this.statusCode, requestId: this.requestId, retryAfter: this.retryAfter, text })
  }

  onError(e: Error) {
    this.done()
    this.reject(e)
  }

  private done() {
    this.abort.removeListener('abort', this.onAbort)
    this.stop = null
  }
}

export function exchange(dispatcher: Dispatcher, opts: Options, abort: CallAbort, idHeader: string) {
  return new Promise<Answer>((resolve, reject) => {
    dispatcher.dispatch(opts, new Collector(abort, idHeader, resolve, reject) as unknown as Dispatcher.DispatchHandler)
  })
}
