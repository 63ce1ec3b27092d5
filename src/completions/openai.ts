import { type Adapter, type CompletionCall, int, modelsOf, splitBase, type UpstreamConfig, type Usage } from './call.js'
import { STOP_REASONS } from '../protocols/stop-reasons.js'
import { type Streamed, UpstreamStreamError } from './stream.js'

// biome-ignore lint/suspicious/noExplicitAny: an upstream JSON body, checked field by field
type Body = Record<string, any>

const stopReason = (reason: unknown) => (typeof reason === 'string' ? (STOP_REASONS[reason] ?? reason) : null)

// OpenAI counts cached prompt tokens inside prompt_tokens; ours are apart, as Anthropic's.
function usageOf(usage: Body): Usage {
  const cached = int(usage.prompt_tokens_details?.cached_tokens)
  return {
    input_tokens: Math.max(0, int(usage.prompt_tokens) - cached),
    output_tokens: int(usage.completion_tokens),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  }
}

// One chunk of a chat-completions stream: text from choices[0].delta.content, the usage from the last chunk (asked
// for with stream_options.include_usage), the end at `[DONE]`.
function readEvent(_type: string, data: string, into: Streamed): string | null {
  if (data === '[DONE]') {
    into.finished = true
    return ''
  }
  const chunk = JSON.parse(data) as Body
  if (chunk?.error) throw new UpstreamStreamError(`The upstream failed: ${String(chunk.error.message ?? chunk.error)}`)
  if (typeof chunk.model === 'string') into.model = chunk.model
  if (chunk.usage && typeof chunk.usage === 'object') {
    into.usage = usageOf(chunk.usage)
    into.usageSeen = true
  }
  const choice = chunk.choices?.[0]
  if (!choice) return ''
  if (choice.finish_reason != null) into.stop_reason = stopReason(choice.finish_reason)
  const text = choice.delta?.content
  return typeof text === 'string' ? text : ''
}

// Any OpenAI-compatible chat-completions server: OpenAI itself, Ollama, vLLM, llama.cpp.
export function openaiAdapter(config: UpstreamConfig): Adapter {
  const { origin, prefix } = splitBase(config.OPENAI_BASE_URL ?? 'http://127.0.0.1:1')
  const path = `${prefix}/chat/completions`
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (config.OPENAI_API_KEY) headers.authorization = `Bearer ${config.OPENAI_API_KEY}`
  return {
    name: 'openai',
    protocol: 'openai',
    origin,
    models: modelsOf(config, 'openai', 'gpt-4.1', 'gpt-4.1-mini'),
    notConfigured: config.OPENAI_BASE_URL
      ? null
      : 'AI completions are not configured: STUDIO_UPSTREAM=openai needs OPENAI_BASE_URL (e.g. ' +
        'http://127.0.0.1:11434/v1 for Ollama), or set STUDIO_UPSTREAM=echo to try the API without a provider',
    requestIdHeader: 'x-request-id',
    endpoint: { path, headers },
    request(call: CompletionCall) {
      const messages =
        call.system !== undefined ? [{ role: 'system', content: call.system }, ...call.messages] : call.messages
      const body: Body = { model: call.model, messages, max_tokens: call.max_tokens }
      if (call.temperature !== undefined) body.temperature = call.temperature
      if (call.stream) {
        body.stream = true
        body.stream_options = { include_usage: true }
      }
      return { path, headers, body: JSON.stringify(body), model: call.model }
    },
    readEvent,
    parse(b: unknown) {
      const body = b as Body
      const choice = body?.choices?.[0]
      if (!choice || typeof choice !== 'object') throw new Error('no choices')
      const content = choice.message?.content
      return {
        model: typeof body.model === 'string' ? body.model : '',
        content: typeof content === 'string' ? content : '',
        stop_reason: stopReason(choice.finish_reason),
        usage: usageOf(body.usage ?? {}),
      }
    },
    errorMessage: (b) => {
      const e = (b as Body)?.error
      const m = typeof e === 'string' ? e : e?.message
      return typeof m === 'string' ? m.slice(0, 1000) : null
    },
    spendLimit: (_status, b) => {
      const e = (b as Body)?.error
      return e?.code === 'insufficient_quota' || e?.type === 'insufficient_quota'
    },
  }
}
