import type { Json } from './refused.js'

const count = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? Math.floor(x) : 0)

export interface AnthropicUsage {
  input_tokens: number
  output_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
}

// Anthropic counts cache reads and writes apart from input_tokens; OpenAI's prompt_tokens includes both, and names
// the cached ones in prompt_tokens_details.cached_tokens (and the written ones in cache_write_tokens).
export function openaiUsageOf(usage: AnthropicUsage) {
  const prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output_tokens,
    total_tokens: prompt + usage.output_tokens,
    prompt_tokens_details: {
      cached_tokens: usage.cache_read_input_tokens,
      cache_write_tokens: usage.cache_creation_input_tokens,
    },
  }
}

export function anthropicUsageOf(usage: Json | null | undefined): AnthropicUsage {
  const cached = count(usage?.prompt_tokens_details?.cached_tokens)
  const written = count(usage?.prompt_tokens_details?.cache_write_tokens)
  return {
    input_tokens: Math.max(0, count(usage?.prompt_tokens) - cached - written),
    output_tokens: count(usage?.completion_tokens),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: written,
  }
}

// The counts an Anthropic usage object has, over those known (a stream's message_delta repeats or adds to
// message_start's).
export function readAnthropicUsage(usage: Json | null | undefined, into: AnthropicUsage) {
  if (!usage) return
  if (usage.input_tokens != null) into.input_tokens = count(usage.input_tokens)
  if (usage.output_tokens != null) into.output_tokens = count(usage.output_tokens)
  if (usage.cache_read_input_tokens != null) into.cache_read_input_tokens = count(usage.cache_read_input_tokens)
  if (usage.cache_creation_input_tokens != null)
    into.cache_creation_input_tokens = count(usage.cache_creation_input_tokens)
}
