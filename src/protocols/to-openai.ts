import type { AnthropicBlock, MessagesRequest } from './anthropic-schema.js'
import { absent, type Json, refusedMembers, type Translated } from './refused.js'
import { finishReasonOf } from './stop-reasons.js'
import { type AnthropicUsage, openaiUsageOf, readAnthropicUsage } from './usage.js'

// Anthropic Messages into OpenAI chat completions: a caller's request for an OpenAI-compatible upstream, and an
// Anthropic upstream's answer for an OpenAI caller. cache_control is a hint that OpenAI's automatic prompt caching
// has no use for but on content parts, where it becomes prompt_cache_breakpoint; elsewhere it is left out.

const CARRIED = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'output_config',
  'output_format',
  'cache_control',
])

const NEUTRAL: Record<string, (member: unknown) => boolean> = {
  thinking: (x) => x == null || (x as Json).type === 'disabled',
  service_tier: (x) => x == null || x === 'auto',
  container: absent,
  inference_geo: absent,
  speed: absent,
  diagnostics: absent,
}

const TEXT_BLOCK = new Set(['type', 'text', 'cache_control'])
const NO_CITATIONS = { citations: absent }
const IMAGE_BLOCK = new Set(['type', 'source', 'cache_control'])

const breakpoint = (block: Json, part: Json) => {
  if (block.cache_control) part.prompt_cache_breakpoint = { mode: 'explicit' }
  return part
}

function partOf(block: Json, at: string, refused: string[]): Json | null {
  if (block.type === 'text') {
    refused.push(...refusedMembers(block, at, TEXT_BLOCK, NO_CITATIONS))
    return breakpoint(block, { type: 'text', text: block.text })
  }
  if (block.type === 'image') {
    refused.push(...refusedMembers(block, at, IMAGE_BLOCK))
    const source = block.source
    if (source.type === 'base64')
      return breakpoint(block, {
        type: 'image_url',
        image_url: { url: `data:${source.media_type};base64,${source.data}` },
      })
    if (source.type === 'url') return breakpoint(block, { type: 'image_url', image_url: { url: source.url } })
    refused.push(`${at}.source`)
    return null
  }
  refused.push(at)
  return null
}

function partsOf(blocks: Json[], at: string, refused: string[]): Json[] {
  const parts: Json[] = []
  blocks.forEach((block, j) => {
    const part = partOf(block, `${at}[${j}]`, refused)
    if (part) parts.push(part)
  })
  return parts
}

// Text alone as a string (what every OpenAI-compatible server takes), parts otherwise.
const contentOf = (parts: Json[]) =>
  parts.every((p) => p.type === 'text' && !p.prompt_cache_breakpoint) ? parts.map((p) => p.text).join('') : parts

const TOOL_USE = new Set(['type', 'id', 'name', 'input', 'cache_control'])
// An Anthropic answer's tool use sent back as it came says the model called it (`caller: {type: "direct"}`), as every
// OpenAI tool call is; one a server tool made is not.
const TOOL_USE_NEUTRAL = {
  caller: (x: unknown) => x == null || (x as Json).type === 'direct',
  toolset_name: absent,
}
const TOOL_RESULT = new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control'])

// OpenAI tool messages carry text alone and have no error flag: an error's text says it is one.
function toolMessageOf(block: Json, at: string, refused: string[]): Json {
  refused.push(...refusedMembers(block, at, TOOL_RESULT))
  const text =
    typeof block.content === 'string'
      ? block.content
      : partsOf(block.content ?? [], `${at}.content`, refused)
          .map((p) => {
            if (p.type !== 'text') refused.push(`${at}.content`)
            return p.text ?? ''
          })
          .join('')
  return { role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${text}` : text }
}

function userMessages(content: string | AnthropicBlock[], at: string, refused: string[]): Json[] {
  if (typeof content === 'string') return [{ role: 'user', content }]
  const out: Json[] = []
  const parts: Json[] = []
  content.forEach((block, j) => {
    const here = `${at}.content[${j}]`
    if (block.type === 'tool_result') out.push(toolMessageOf(block, here, refused))
    else {
      const part = partOf(block, here, refused)
      if (part) parts.push(part)
    }
  })
  if (parts.length > 0) out.push({ role: 'user', content: contentOf(parts) })
  return out
}

function assistantMessage(content: string | AnthropicBlock[], at: string, refused: string[]): Json {
  if (typeof content === 'string') return { role: 'assistant', content }
  const parts: Json[] = []
  const calls: Json[] = []
  content.forEach((block, j) => {
    const here = `${at}.content[${j}]`
    if (block.type === 'tool_use') {
      refused.push(...refusedMembers(block, here, TOOL_USE, TOOL_USE_NEUTRAL))
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      })
    } else if (block.type === 'text') {
      refused.push(...refusedMembers(block, here, TEXT_BLOCK, NO_CITATIONS))
      parts.push({ type: 'text', text: block.text })
    } else refused.push(here)
  })
  const message: Json = { role: 'assistant', content: parts.length > 0 ? contentOf(parts) : null }
  if (calls.length > 0) message.tool_calls = calls
  return message
}

function systemMessage(system: string | Json[], at: string, refused: string[]): Json {
  return { role: 'system', content: typeof system === 'string' ? system : contentOf(partsOf(system, at, refused)) }
}

const CUSTOM_TOOL = new Set(['type', 'name', 'description', 'input_schema', 'strict', 'cache_control'])

function toolOf(tool: Json, at: string, refused: string[]): Json {
  if (tool.type != null && tool.type !== 'custom') {
    refused.push(at)
    return {}
  }
  refused.push(...refusedMembers(tool, at, CUSTOM_TOOL, { eager_input_streaming: absent }))
  const f: Json = { name: tool.name, parameters: tool.input_schema }
  if (tool.description !== undefined) f.description = tool.description
  if (tool.strict !== undefined) f.strict = tool.strict
  return { type: 'function', function: f }
}

function toolChoiceOf(choice: Json): string | Json {
  if (choice.type === 'any') return 'required'
  if (choice.type === 'tool') return { type: 'function', function: { name: choice.name } }
  return choice.type
}

// A Messages request as a chat-completions request, with the members OpenAI cannot express.
export function openaiRequestOf(request: MessagesRequest): Translated {
  const refused = refusedMembers(request, '', CARRIED, NEUTRAL)
  const messages: Json[] = []
  if (request.system !== undefined) messages.push(systemMessage(request.system, 'system', refused))
  request.messages.forEach((m, i) => {
    const at = `messages[${i}]`
    refused.push(...refusedMembers(m, at, new Set(['role', 'content'])))
    if (m.role === 'system') messages.push(systemMessage(m.content, `${at}.content`, refused))
    else if (m.role === 'user') messages.push(...userMessages(m.content, at, refused))
    else messages.push(assistantMessage(m.content, at, refused))
  })
  const body: Json = { model: request.model, messages, max_tokens: request.max_tokens }
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.top_p !== undefined) body.top_p = request.top_p
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) body.stop = request.stop_sequences
  if (request.metadata != null) {
    refused.push(...refusedMembers(request.metadata, 'metadata', new Set(['user_id'])))
    if (request.metadata.user_id != null) body.user = request.metadata.user_id
  }
  if (request.tools !== undefined) body.tools = request.tools.map((tool, i) => toolOf(tool, `tools[${i}]`, refused))
  if (request.tool_choice !== undefined) {
    body.tool_choice = toolChoiceOf(request.tool_choice)
    if (request.tool_choice.disable_parallel_tool_use === true) body.parallel_tool_calls = false
  }
  const format = request.output_config?.format ?? request.output_format
  if (request.output_config != null)
    refused.push(...refusedMembers(request.output_config, 'output_config', new Set(['format']), { effort: absent }))
  if (format != null)
    body.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: true } }
  if (request.stream) {
    body.stream = true
    body.stream_options = { include_usage: true }
  }
  return { body, refused: [...new Set(refused)] }
}

// An Anthropic upstream's Message as the chat.completion an OpenAI caller expects; `model`, when given, is the name
// the caller used (the route's alias) in place of the upstream's.
export function openaiCompletionOf(message: Json, options: { created?: number; model?: string } = {}): Json {
  let text: string | null = null
  const calls: Json[] = []
  for (const block of message.content ?? []) {
    if (block?.type === 'text') text = (text ?? '') + block.text
    else if (block?.type === 'tool_use')
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      })
  }
  const reply: Json = { role: 'assistant', content: text, refusal: null }
  if (calls.length > 0) reply.tool_calls = calls
  const usage: AnthropicUsage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  }
  readAnthropicUsage(message.usage, usage)
  return {
    id: String(message.id ?? ''),
    object: 'chat.completion',
    created: options.created ?? Math.floor(Date.now() / 1000),
    model: options.model ?? String(message.model ?? ''),
    choices: [{ index: 0, message: reply, finish_reason: finishReasonOf(message.stop_reason), logprobs: null }],
    usage: openaiUsageOf(usage),
  }
}
