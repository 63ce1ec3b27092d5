import type { Dispatcher } from 'undici'
import type { Handler, Transport } from '../ops/transport.js'
import type { SignedHeaders } from './signature.js'
import { ForbiddenAddressError, REFUSED_PRIVATE } from './address.js'

// One webhook POST. Success is a 2xx within `timeoutMs`; at most 64 KiB of the answer is read; a redirect is an
// answer like any other (never followed). Sent through undici's `dispatch` (as completions/exchange.ts), not its
// `request` API: for an answer read whole anyway, that makes an AsyncResource, a Readable stream, two abort signals
// and a parsed object of every header per delivery.

const ANSWER_LIMIT = 64 * 1024

export interface PostResult {
  status: number | null
  // The first bytes of the answer, or why there was none.
  answer: string
  durationMs: number
  retryAfter?: string
}

export interface Post {
  url: string
  body: string
  headers: SignedHeaders
  userAgent: string
  timeoutMs: number
  signal: AbortSignal
}

// Why a dispatch was stopped: the deadline passed, the worker is stopping, or the answer reached ANSWER_LIMIT.
type Stop = 'deadline' | 'stopping' | 'full'

// undici's handler callbacks, in the form its core calls directly. Settles once: at the answer's end, or at the
// failure that ended it (with what was read by then, or why there was nothing).
class AnswerReader {
  status: number | null = null
  retryAfter: string | undefined
  private stopped: Stop | null = null
  private chunks: Buffer[] = []
  private size = 0
  private abort: ((e: Error) => void) | null = null

  constructor(
    private timeoutMs: number,
    private settle: (answer: string) => void
  ) {}

  stop(why: Stop) {
    this.stopped ??= why
    this.abort?.(new Error(why === 'deadline' ? 'the deadline passed' : 'the delivery stopped'))
  }

  onConnect(abort: (e: Error) => void) {
    this.abort = abort
    if (this.stopped) this.stop(this.stopped)
  }

  onHeaders(statusCode: number, raw: Buffer[]) {
    if (statusCode < 200) return true
    this.status = statusCode
    for (let i = 0; i < raw.length; i += 2)
      if (raw[i].length === 11 && raw[i].toString('latin1').toLowerCase() === 'retry-after')
        this.retryAfter ??= raw[i + 1].toString('latin1')
    return true
  }

  onData(chunk: Buffer) {
    this.chunks.push(chunk)
    this.size += chunk.length
    if (this.size >= ANSWER_LIMIT) this.stop('full')
    return true
  }

  onComplete() {
    this.settle(this.text())
  }

  onError(e: Error) {
    if (this.stopped === 'full') this.settle(this.text())
    else if (e instanceof ForbiddenAddressError) this.settle(`${REFUSED_PRIVATE}: ${e.message}`)
    else if (this.status !== null) this.settle(`(answer cut: ${e.message})`)
    else this.settle(`(${this.stopped === 'deadline' ? `no answer within ${this.timeoutMs} ms` : e.message})`)
  }

  private text() {
    const { chunks } = this
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
    return all.subarray(0, ANSWER_LIMIT).toString('utf8')
  }
}

// The first delivery loads undici (the dispatcher's Agent) before its deadline starts; a failed load throws, and the
// delivery is tried again when its claim lapses.
export async function postWebhook(dispatcher: Transport, post: Post): Promise<PostResult> {
  await dispatcher.load?.()
  const started = performance.now()
  const url = new URL(post.url)
  const options: Dispatcher.DispatchOptions = {
    origin: url.origin,
    path: url.pathname + url.search,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': post.userAgent, ...post.headers },
    body: post.body,
  }
  const { signal, timeoutMs } = post
  let reader!: AnswerReader
  const answer = await new Promise<string>((settle) => {
    const stopping = () => reader.stop('stopping')
    const timer = setTimeout(() => reader.stop('deadline'), timeoutMs)
    signal.addEventListener('abort', stopping, { once: true })
    reader = new AnswerReader(timeoutMs, (text) => {
      clearTimeout(timer)
      signal.removeEventListener('abort', stopping)
      settle(text)
    })
    if (signal.aborted) reader.stop('stopping')
    dispatcher.dispatch(options, reader as unknown as Handler)
  })
  const { status, retryAfter } = reader
  return { status, answer, durationMs: Math.round(performance.now() - started), retryAfter }
}
