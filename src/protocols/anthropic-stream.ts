import { anthropicStreamError, upstreamStreamFailure } from './errors.js'
import type { Json } from './refused.js'
import type { SseEvent } from './sse-events.js'
import { stopReasonOf } from './stop-reasons.js'
import { DIRECT } from './to-anthropic.js'
import { type AnthropicUsage, anthropicUsageOf } from './usage.js'

const event = (type: string, body: Json): SseEvent => ({ event: type, data: JSON.stringify({ type, ...body }) })

// An OpenAI-compatible upstream's chat.completion.chunk stream as the Messages stream an Anthropic caller reads: one
// translator per stream, fed each upstream event in order. Text and each tool call become content blocks, one open
// at a time, the arguments input_json_delta fragments as they came (a late fragment of an earlier call, from a server
// that interleaves parallel calls, goes to that call's block by its index, which is how the SDKs gather them); the
// usage, which OpenAI sends last (the request asks for it), goes in message_delta.
export class AnthropicStreamFromOpenAI {
  private started = false
  private finished = false
  private blocks = 0
  private open: number | null = null
  private textBlock: number | null = null
  // The OpenAI tool call's index → its content block's.
  private readonly toolBlocks = new Map<number, number>()
  private stopReason = 'end_turn'
  private usage: AnthropicUsage = anthropicUsageOf(null)

  // `model`, when given, is the name the caller used (the route's alias) in place of the upstream's.
  constructor(private readonly options: { model?: string } = {}) {}

  private start(chunk: Json, out: SseEvent[]) {
    if (this.started) return
    this.started = true
    const message = {
      id: String(chunk.id ?? ''),
      type: 'message',
      role: 'assistant',
      model: this.options.model ?? String(chunk.model ?? ''),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsageOf(null),
    }
    out.push(event('message_start', { message }))
  }

  private close(out: SseEvent[]) {
    if (this.open === null) return
    out.push(event('content_block_stop', { index: this.open }))
    this.open = null
    this.textBlock = null
  }

  private openBlock(block: Json, out: SseEvent[]): number {
    this.close(out)
    const index = this.blocks++
    out.push(event('content_block_start', { index, content_block: block }))
    this.open = index
    return index
  }

  private text(text: string, out: SseEvent[]) {
    if (text === '') return
    const index = this.textBlock ?? this.openBlock({ type: 'text', text: '' }, out)
    this.textBlock = index
    out.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }))
  }

  private toolCall(call: Json, out: SseEvent[]) {
    const key = typeof call.index === 'number' ? call.index : 0
    let index = this.toolBlocks.get(key)
    if (index === undefined) {
      const block = {
        type: 'tool_use',
        id: String(call.id ?? `toolu_${key}`),
        name: call.function?.name ?? '',
        input: {},
        caller: DIRECT,
      }
      index = this.openBlock(block, out)
      this.toolBlocks.set(key, index)
    }
    const fragment = call.function?.arguments
    if (typeof fragment === 'string' && fragment !== '')
      out.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: fragment } }))
  }

  // One upstream event (its SSE data) → the events to write, maybe none.
  push(_type: string, data: string): SseEvent[] {
    if (this.finished) return []
    if (data === '[DONE]') return this.finish()
    const chunk = JSON.parse(data) as Json
    if (chunk.error) {
      this.finished = true
      return [anthropicStreamError(upstreamStreamFailure(chunk.error.message ?? chunk.error))]
    }
    const out: SseEvent[] = []
    this.start(chunk, out)
    if (chunk.usage) this.usage = anthropicUsageOf(chunk.usage)
    const choice = chunk.choices?.[0]
    if (!choice) return out
    const delta = choice.delta ?? {}
    if (typeof delta.content === 'string') this.text(delta.content, out)
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      this.text(delta.refusal, out)
      this.stopReason = 'refusal'
    }
    for (const call of delta.tool_calls ?? []) this.toolCall(call, out)
    if (choice.finish_reason != null && this.stopReason !== 'refusal')
      this.stopReason = stopReasonOf(choice.finish_reason)
    return out
  }

  // The end of the upstream's stream ([DONE], or its body's end without one): the open block closed, the stop
  // reason and usage, message_stop.
  finish(): SseEvent[] {
    if (this.finished) return []
    this.finished = true
    const out: SseEvent[] = []
    this.start({}, out)
    this.close(out)
    out.push(
      event('message_delta', { delta: { stop_reason: this.stopReason, stop_sequence: null }, usage: this.usage }),
      event('message_stop', {})
    )
    return out
  }
}
