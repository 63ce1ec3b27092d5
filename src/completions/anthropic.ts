import { type Adapter, type CompletionCall, int, modelsOf, splitBase, type UpstreamConfig, type Usage } from './call.js'
import { type Streamed, UpstreamStreamError } from './stream.js'

const ANTHROPIC_VERSION = '2023-06-01'

// biome-ignore lint/suspicious/noExplicitAny: an upstream JSON body, checked field by field
type Body = Record<string, any>

// The text blocks of an answer's content, joined.
function textOf(content: Body[]): string {
  let text = ''
  for (const c of content) if (c?.type === 'text' && typeof c.text === 'string') text += c.text
  return text
}

// The counts a usage object has, over those known (a stream's message_delta repeats or adds to message_start's).
function readUsage(usage: Body, into: Usage) {
  if (usage.input_tokens != null) into.input_tokens = int(usage.input_tokens)
  if (usage.output_tokens != null) into.output_tokens = int(usage.output_tokens)
  if (usage.cache_read_input_tokens != null) into.cache_read_input_tokens = int(usage.cache_read_input_tokens)
  if (usage.cache_creation_input_tokens != null)
    into.cache_creation_input_tokens = int(usage.cache_creation_input_tokens)
}

// The error events of a stream that a status would have made another attempt: 529, 500, 429.
const RETRYABLE_ERRORS = new Set(['overloaded_error', 'api_error', 'rate_limit_error'])

// One event of a Messages stream: text from content_block_delta, the model and usage from message_start, the stop
// reason and the final usage from message_delta; ping and the block boundaries add nothing.
function readEvent(type: string, data: string, into: Streamed): string | null {
  if (type === 'ping') return null
  const e = JSON.parse(data) as Body
  switch (type) {
    case 'content_block_delta':
      return e.delta?.type === 'text_delta' && typeof e.delta.text === 'string' ? e.delta.text : ''
    case 'message_start': {
      const m = e.message ?? {}
      if (typeof m.model === 'string') into.model = m.model
      if (m.usage && typeof m.usage === 'object') {
        readUsage(m.usage, into.usage)
        into.usageSeen = true
      }
      return ''
    }
    case 'message_delta':
      if (typeof e.delta?.stop_reason === 'string') into.stop_reason = e.delta.stop_reason
      if (e.usage && typeof e.usage === 'object') {
        readUsage(e.usage, into.usage)
        into.usageSeen = true
      }
      return ''
    case 'message_stop':
      into.finished = true
      return ''
    case 'error': {
      const message = `The upstream failed: ${String(e.error?.message ?? 'error').slice(0, 1000)}`
      throw new UpstreamStreamError(message, RETRYABLE_ERRORS.has(String(e.error?.type)))
    }
    default:
      return ''
  }
}

export function anthropicAdapter(config: UpstreamConfig): Adapter {
  const { origin, prefix } = splitBase(config.ANTHROPIC_BASE_URL)
  const path = `${prefix}/v1/messages`
  const headers = {
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    'x-api-key': config.ANTHROPIC_API_KEY ?? '',
  }
  return {
    name: 'anthropic',
    protocol: 'anthropic',
    origin,
    models: modelsOf(config, 'anthropic', 'claude-sonnet-4-5', 'claude-haiku-4-5'),
    notConfigured: config.ANTHROPIC_API_KEY
      ? null
      : 'AI completions are not configured: set ANTHROPIC_API_KEY, or STUDIO_UPSTREAM=openai with OPENAI_BASE_URL ' +
        '(any OpenAI-compatible server), or STUDIO_UPSTREAM=echo to try the API without a provider',
    requestIdHeader: 'request-id',
    endpoint: { path, headers },
    request(call: CompletionCall) {
      const body: Body = { model: call.model, max_tokens: call.max_tokens, messages: call.messages }
      if (call.system !== undefined) body.system = call.system
      if (call.temperature !== undefined) body.temperature = call.temperature
      if (call.stream) body.stream = true
      return { path, headers, body: JSON.stringify(body), model: call.model }
    },
    readEvent,
    parse(b: unknown) {
      const body = b as Body
      if (!body || typeof body !== 'object' || !Array.isArray(body.content)) throw new Error('no content array')
      const usage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
      readUsage(body.usage ?? {}, usage)
      return {
        model: typeof body.model === 'string' ? body.model : '',
        content: textOf(body.content),
        stop_reason: typeof body.stop_reason === 'string' ? body.stop_reason : null,
        usage,
      }
    },
    errorMessage: (b) => {
      const m = (b as Body)?.error?.message
      return typeof m === 'string' ? m.slice(0, 1000) : null
    },
    spendLimit: (_status, b) => {
      const e = (b as Body)?.error
      return e?.type === 'billing_error' || /spend limit|credit balance/i.test(String(e?.message ?? ''))
    },
  }
}
