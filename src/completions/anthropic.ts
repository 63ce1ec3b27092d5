import { type Adapter, type CompletionCall, int, splitBase, type UpstreamConfig } from './call.js'

const ANTHROPIC_VERSION = '2023-06-01'

// biome-ignore lint/suspicious/noExplicitAny: an upstream JSON body, checked field by field
type Body = Record<string, any>

// The text blocks of an answer's content, joined.
function textOf(content: Body[]): string {
  let text = ''
  for (const c of content) if (c?.type === 'text' && typeof c.text === 'string') text += c.text
  return text
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
    origin,
    models: {
      primary: config.STUDIO_MODEL_PRIMARY ?? 'claude-sonnet-4-5',
      fast: config.STUDIO_MODEL_FAST ?? 'claude-haiku-4-5',
    },
    notConfigured: config.ANTHROPIC_API_KEY
      ? null
      : 'AI completions are not configured: set ANTHROPIC_API_KEY (or STUDIO_UPSTREAM=openai with OPENAI_BASE_URL)',
    requestIdHeader: 'request-id',
    request(call: CompletionCall) {
      const body: Body = { model: call.model, max_tokens: call.max_tokens, messages: call.messages }
      if (call.system !== undefined) body.system = call.system
      if (call.temperature !== undefined) body.temperature = call.temperature
      return { path, headers, body: JSON.stringify(body) }
    },
    parse(b: unknown) {
      const body = b as Body
      if (!body || typeof body !== 'object' || !Array.isArray(body.content)) throw new Error('no content array')
      const usage = body.usage ?? {}
      return {
        model: typeof body.model === 'string' ? body.model : '',
        content: textOf(body.content),
        stop_reason: typeof body.stop_reason === 'string' ? body.stop_reason : null,
        usage: {
          input_tokens: int(usage.input_tokens),
          output_tokens: int(usage.output_tokens),
          cache_read_input_tokens: int(usage.cache_read_input_tokens),
          cache_creation_input_tokens: int(usage.cache_creation_input_tokens),
        },
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
