import type { Adapter, Protocol, Usage } from './call.js'
import { SseParser } from './sse.js'
import type { SseReply } from './sse-reply.js'
import type { Span } from '../ops/trace.js'
import { answered } from './attempt-span.js'
import { sseText } from '../protocols/sse-events.js'
import type { CallerProtocol, Relay } from './context.js'

// A streamed answer as far as it has come: the completion without its content (the deltas carry it), whether the
// upstream sent any usage count, and whether its stream said it was over.
export interface Streamed {
  model: string
  stop_reason: string | null
  usage: Usage
  usageSeen: boolean
  finished: boolean
}

// The upstream said, in its stream, that the call failed; `retryable` when it said it was overloaded or failing on its
// side (before the first event, that is another attempt, as a 529 or a 5xx would be).
export class UpstreamStreamError extends Error {
  constructor(
    message: string,
    readonly retryable = false
  ) {
    super(message)
  }
}

const fresh = (): Streamed => ({
  model: '',
  stop_reason: null,
  usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  usageSeen: false,
  finished: false,
})

const noop = () => {}

// A streamed upstream answer, read as its body arrives (exchange.ts pushes each chunk of a 2xx body): each piece of
// text goes to the reply as soon as it is parsed, the rest (model, stop reason, usage) is kept for `done`. `started`
// says its first event arrived (the attempt ends there); `ended` settles when the upstream's stream is over.
export class UpstreamStream {
  started = false
  failure: Error | null = null
  content = ''
  deltas = 0
  streamed = fresh()
  readonly ended: Promise<void>
  private adapter: Adapter | null = null
  // The attempt's relay to a caller's protocol (null: the native events).
  private relay: Relay | null = null
  // The attempt's span, when traced: ended with the stream.
  private span: Span | null = null
  private parser = new SseParser((type, data) => this.event(type, data))
  private resolve = noop
  private reject: (e: Error) => void = noop

  constructor(
    private readonly out: SseReply,
    private readonly onFirstDelta: () => void,
    private readonly caller?: CallerProtocol
  ) {
    this.ended = new Promise((ok, fail) => {
      this.resolve = ok
      this.reject = fail
    })
    this.ended.catch(noop)
  }

  // A new attempt's body (an attempt before it failed before its first event: nothing of it was kept but its parser's
  // state and the error its stream sent, dropped here).
  begin(adapter: Adapter, span?: Span) {
    this.adapter = adapter
    this.relay = this.caller?.relay(adapter.protocol) ?? null
    this.span = span ?? null
    this.failure = null
    this.parser = new SseParser((type, data) => this.event(type, data))
    this.streamed = fresh()
  }

  // The events of every chunk pushed in one tick leave in one write: node corks a response's socket at its first
  // write of a tick until the next (a cork here, per chunk, would send each chunk's events on their own).
  push(chunk: Buffer) {
    if (this.failure) return
    this.parser.push(chunk)
  }

  // The upstream's body is over.
  end() {
    if (!this.streamed.finished) return this.fail(new UpstreamStreamError('The upstream stream ended before its end'))
    if (this.span) {
      answered(this.span, this.streamed)
      this.span.end()
      this.span = null
    }
    this.resolve()
  }

  fail(e: Error) {
    this.failure ??= e
    if (this.span) {
      const code = (this.failure as { code?: unknown }).code
      this.span.fail(this.failure instanceof UpstreamStreamError ? 'upstream_error' : String(code ?? this.failure.name))
      this.span.end()
      this.span = null
    }
    this.reject(this.failure)
  }

  private event(type: string, data: string) {
    if (this.failure) return
    let text: string | null
    try {
      text = this.adapter!.readEvent(type, data, this.streamed)
      if (this.relay) return this.relayed(type, data, text)
    } catch (e) {
      this.failure = e as Error
      return
    }
    if (text === null) return
    this.started = true
    if (text === '') return
    this.content += text
    if (this.deltas++ === 0) this.onFirstDelta()
    this.out.delta(text)
  }

  // An event for a caller in its own protocol: the relay's events, each passed on (a ping once the answer has begun);
  // the unit is spent at the first that carries a piece of the answer, as the native stream's first text.
  private relayed(type: string, data: string, text: string | null) {
    if (text === null && !this.started) return
    if (text !== null) this.started = true
    const events = this.relay!.push(type, data)
    if (this.deltas === 0 && carriesContent(this.adapter!.protocol, type, data, text)) {
      this.deltas++
      this.onFirstDelta()
    }
    if (events.length > 0) this.out.events(sseText(events))
  }
}

// Whether an upstream event carries a piece of the answer: text, or a content block's delta (Anthropic's tool input,
// thinking), or an OpenAI chunk's tool call or refusal; not the message's start, a role-only chunk or the usage.
function carriesContent(protocol: Protocol, type: string, data: string, text: string | null): boolean {
  if (text) return true
  if (protocol === 'anthropic') return type === 'content_block_delta'
  if (data === '[DONE]') return false
  const delta = (JSON.parse(data) as { choices?: { delta?: { tool_calls?: unknown[]; refusal?: unknown } }[] })
    .choices?.[0]?.delta
  return (delta?.tool_calls?.length ?? 0) > 0 || Boolean(delta?.refusal)
}
