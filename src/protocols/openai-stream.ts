import { openaiStreamError, upstreamStreamFailure } from './errors.js'
import type { Json } from './refused.js'
import type { SseEvent } from './sse-events.js'
import { finishReasonOf } from './stop-reasons.js'
import { type AnthropicUsage, openaiUsageOf, readAnthropicUsage } from './usage.js'

// An Anthropic upstream's Messages stream as the chat.completion.chunk stream an OpenAI caller reads: one translator
// per stream, fed each upstream event in order. Each tool call gets its index, id and name in its first chunk, then
// its arguments as Anthropic sent them (fragments of JSON, which the caller joins), and the usage chunk comes last
// when the caller asked for it (stream_options.include_usage), before [DONE]. `model`, when given, is the name the
// caller used (the route's alias) in place of the upstream's.
export class OpenAIStreamFromAnthropic {
  private id = ''
  private model = ''
  private readonly usage: AnthropicUsage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  }
  // Anthropic's content block index → the OpenAI tool call's index.
  private readonly toolCalls = new Map<number, number>()

  constructor(private readonly options: { includeUsage: boolean; created: number; model?: string }) {}

  private envelope(rest: Json): SseEvent {
    const { id, model } = this
    return {
      data: JSON.stringify({ id, object: 'chat.completion.chunk', created: this.options.created, model, ...rest }),
    }
  }

  private chunk(delta: Json, finishReason: string | null = null): SseEvent {
    return this.envelope({ choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] })
  }

  // One upstream event (its SSE name, its data) → the chunks to write, maybe none.
  push(type: string, data: string): SseEvent[] {
    if (type === 'ping') return []
    const e = JSON.parse(data) as Json
    switch (type || e.type) {
      case 'message_start': {
        this.id = String(e.message?.id ?? '')
        this.model = this.options.model ?? String(e.message?.model ?? '')
        readAnthropicUsage(e.message?.usage, this.usage)
        return [this.chunk({ role: 'assistant', content: '' })]
      }
      case 'content_block_start': {
        const block = e.content_block ?? {}
        if (block.type === 'tool_use') {
          const index = this.toolCalls.size
          this.toolCalls.set(e.index, index)
          const call = { index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }
          return [this.chunk({ tool_calls: [call] })]
        }
        return block.type === 'text' && block.text ? [this.chunk({ content: block.text })] : []
      }
      case 'content_block_delta': {
        const delta = e.delta ?? {}
        if (delta.type === 'text_delta') return [this.chunk({ content: delta.text })]
        const index = this.toolCalls.get(e.index)
        if (delta.type === 'input_json_delta' && index !== undefined && delta.partial_json !== '')
          return [this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })]
        return []
      }
      case 'message_delta':
        readAnthropicUsage(e.usage, this.usage)
        return [this.chunk({}, finishReasonOf(e.delta?.stop_reason))]
      case 'message_stop':
        return this.options.includeUsage
          ? [this.envelope({ choices: [], usage: openaiUsageOf(this.usage) }), { data: '[DONE]' }]
          : [{ data: '[DONE]' }]
      case 'error':
        return [openaiStreamError(upstreamStreamFailure(e.error?.message))]
      default:
        return []
    }
  }
}
