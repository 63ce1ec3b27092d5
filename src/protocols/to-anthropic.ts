import type { ChatMessage, ChatRequest } from './openai-schema.js'
import { absent, emptyList, emptyObject, type Json, refusedMembers, type Translated } from './refused.js'
import { stopReasonOf } from './stop-reasons.js'
import { anthropicUsageOf } from './usage.js'

// OpenAI chat completions into Anthropic Messages: a caller's request for an Anthropic upstream, and an OpenAI
// upstream's answer for an Anthropic caller.

// Anthropic requires max_tokens; OpenAI lets the model decide.
const DEFAULT_MAX_TOKENS = 4096

const CARRIED = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'stream',
  'stream_options',
  'user',
  'safety_identifier',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
])

const NEUTRAL: Record<string, (member: unknown) => boolean> = {
  n: (x) => x == null || x === 1,
  logprobs: (x) => x == null || x === false,
  top_logprobs: absent,
  frequency_penalty: (x) => x == null || x === 0,
  presence_penalty: (x) => x == null || x === 0,
  logit_bias: emptyObject,
  metadata: emptyObject,
  store: (x) => x == null || x === false,
  seed: absent,
  modalities: (x) => x == null || (Array.isArray(x) && x.length === 1 && x[0] === 'text'),
  audio: absent,
  prediction: absent,
  reasoning_effort: absent,
  service_tier: (x) => x == null || x === 'auto',
  verbosity: absent,
  web_search_options: absent,
  functions: absent,
  function_call: absent,
}

const BASE64_IMAGE = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.*)$/s

function textBlock(text: string, breakpoint: unknown): Json {
  const block: Json = { type: 'text', text }
  if (breakpoint) block.cache_control = { type: 'ephemeral' }
  return block
}

function partBlock(part: Json, at: string, refused: string[]): Json | null {
  if (part.type === 'text') {
    refused.push(...refusedMembers(part, at, new Set(['type', 'text', 'prompt_cache_breakpoint'])))
    return textBlock(part.text, part.prompt_cache_breakpoint)
  }
  if (part.type === 'image_url') {
    refused.push(...refusedMembers(part, at, new Set(['type', 'image_url', 'prompt_cache_breakpoint'])))
    const { url, detail } = part.image_url
    if (detail !== undefined && detail !== 'auto') refused.push(`${at}.image_url.detail`)
    const base64 = BASE64_IMAGE.exec(url)
    const source = base64
      ? { type: 'base64', media_type: base64[1], data: base64[2] }
      : /^https?:\/\//i.test(url)
        ? { type: 'url', url }
        : null
    if (source === null) refused.push(`${at}.image_url.url`)
    const block: Json = { type: 'image', source }
    if (part.prompt_cache_breakpoint) block.cache_control = { type: 'ephemeral' }
    return block
  }
  refused.push(at)
  return null
}

function contentBlocks(content: string | Json[] | null | undefined, at: string, refused: string[]): Json[] {
  if (content == null || content === '') return []
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  const blocks: Json[] = []
  content.forEach((part, j) => {
    const block = partBlock(part, `${at}.content[${j}]`, refused)
    if (block) blocks.push(block)
  })
  return blocks
}

const SIMPLE_MESSAGE = new Set(['role', 'content'])
const ASSISTANT_MESSAGE = new Set(['role', 'content', 'tool_calls'])
// An OpenAI answer's message sent back as it came has `refusal: null` and `annotations: []`.
const ASSISTANT_NEUTRAL = { refusal: absent, function_call: absent, audio: absent, annotations: emptyList }
const TOOL_MESSAGE = new Set(['role', 'content', 'tool_call_id'])

function toolUseBlocks(calls: Json[] | undefined, at: string, refused: string[]): Json[] {
  const blocks: Json[] = []
  for (const [k, call] of (calls ?? []).entries()) {
    if (call.type !== 'function') {
      refused.push(`${at}.tool_calls[${k}]`)
      continue
    }
    let input: unknown
    try {
      input = call.function.arguments === '' ? {} : JSON.parse(call.function.arguments)
    } catch {
      input = null
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input))
      refused.push(`${at}.tool_calls[${k}].function.arguments`)
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input })
  }
  return blocks
}

// Messages in order; system and developer messages become the system prompt, tool messages tool_result blocks of a
// user turn, and turns of the same role are joined (Anthropic alternates user and assistant).
function translateMessages(messages: ChatMessage[], refused: string[]) {
  const system: Json[] = []
  const turns: { role: 'user' | 'assistant'; content: Json[] }[] = []
  const add = (role: 'user' | 'assistant', blocks: Json[]) => {
    const last = turns.at(-1)
    if (last?.role === role) last.content.push(...blocks)
    else if (blocks.length > 0) turns.push({ role, content: blocks })
  }
  messages.forEach((m, i) => {
    const at = `messages[${i}]`
    switch (m.role) {
      case 'system':
      case 'developer':
        refused.push(...refusedMembers(m, at, SIMPLE_MESSAGE))
        system.push(...contentBlocks(m.content, at, refused))
        break
      case 'user':
        refused.push(...refusedMembers(m, at, SIMPLE_MESSAGE))
        add('user', contentBlocks(m.content, at, refused))
        break
      case 'assistant':
        refused.push(...refusedMembers(m, at, ASSISTANT_MESSAGE, ASSISTANT_NEUTRAL))
        add('assistant', [...contentBlocks(m.content, at, refused), ...toolUseBlocks(m.tool_calls, at, refused)])
        break
      case 'tool':
        refused.push(...refusedMembers(m, at, TOOL_MESSAGE))
        add('user', [
          {
            type: 'tool_result',
            tool_use_id: m.tool_call_id,
            content: typeof m.content === 'string' ? m.content : contentBlocks(m.content, at, refused),
          },
        ])
        break
      default:
        refused.push(at)
    }
  })
  return { system, turns }
}

const FUNCTION_TOOL = new Set(['type', 'function'])
const FUNCTION = new Set(['name', 'description', 'parameters', 'strict'])

function translateTools(tools: Json[], refused: string[]): Json[] {
  return tools.map((tool, i) => {
    const at = `tools[${i}]`
    if (tool.type !== 'function') {
      refused.push(at)
      return {}
    }
    refused.push(
      ...refusedMembers(tool, at, FUNCTION_TOOL),
      ...refusedMembers(tool.function, `${at}.function`, FUNCTION)
    )
    const f = tool.function
    const schema = f.parameters ?? { type: 'object', properties: {} }
    if (schema.type !== 'object') refused.push(`${at}.function.parameters`)
    const out: Json = { name: f.name, input_schema: schema }
    if (f.description !== undefined) out.description = f.description
    if (f.strict != null) out.strict = f.strict
    return out
  })
}

function translateToolChoice(request: ChatRequest, refused: string[]): Json | undefined {
  const choice = request.tool_choice
  const parallel = request.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {}
  if (choice === undefined) return request.parallel_tool_calls === false ? { type: 'auto', ...parallel } : undefined
  if (choice === 'none') return { type: 'none' }
  if (choice === 'auto') return { type: 'auto', ...parallel }
  if (choice === 'required') return { type: 'any', ...parallel }
  if (choice.type === 'function') return { type: 'tool', name: (choice.function as Json).name, ...parallel }
  refused.push('tool_choice')
  return undefined
}

// Anthropic's structured output takes a schema whose objects all say additionalProperties: false, so "any JSON
// object" (json_object) cannot be one: it becomes an instruction at the end of the system prompt.
const JSON_OBJECT_INSTRUCTION = 'Answer with one JSON object and nothing else.'

function translateResponseFormat(format: ChatRequest['response_format'], system: Json[]): Json | undefined {
  if (format === undefined || format.type === 'text') return undefined
  if (format.type === 'json_object') {
    system.push({ type: 'text', text: JSON_OBJECT_INSTRUCTION })
    return undefined
  }
  const schema = (format as Json).json_schema.schema ?? { type: 'object', additionalProperties: false }
  return { format: { type: 'json_schema', schema } }
}

// A chat-completions request as a Messages request, with the members Anthropic cannot express.
export function anthropicRequestOf(request: ChatRequest): Translated {
  const refused = refusedMembers(request, '', CARRIED, NEUTRAL)
  const { system, turns } = translateMessages(request.messages, refused)
  const body: Json = {
    model: request.model,
    max_tokens: request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: turns,
  }
  const output = translateResponseFormat(request.response_format, system)
  if (output !== undefined) body.output_config = output
  if (system.length > 0) body.system = system
  if (request.temperature != null) {
    if (request.temperature > 1) refused.push('temperature')
    body.temperature = request.temperature
  }
  if (request.top_p != null) body.top_p = request.top_p
  if (request.stop != null) body.stop_sequences = typeof request.stop === 'string' ? [request.stop] : request.stop
  const user = request.safety_identifier ?? request.user
  if (user != null) body.metadata = { user_id: user }
  if (request.tools !== undefined) body.tools = translateTools(request.tools, refused)
  const toolChoice = translateToolChoice(request, refused)
  if (toolChoice !== undefined) body.tool_choice = toolChoice
  if (request.stream) body.stream = true
  return { body, refused: [...new Set(refused)] }
}

function argumentsOf(text: unknown): Json {
  try {
    const input = JSON.parse(typeof text === 'string' && text !== '' ? text : '{}')
    return input !== null && typeof input === 'object' && !Array.isArray(input) ? input : { value: input }
  } catch {
    return {}
  }
}

// Who called a tool, as the current Anthropic SDK's ToolUseBlock always says: the model, as OpenAI's tool calls are.
export const DIRECT = { type: 'direct' }

// An OpenAI upstream's chat.completion as the Message an Anthropic caller expects; `model`, when given, is the name
// the caller used (the route's alias) in place of the upstream's.
export function anthropicMessageOf(completion: Json, options: { model?: string } = {}): Json {
  const choice = completion.choices?.[0] ?? {}
  const message = choice.message ?? {}
  const content: Json[] = []
  const text = typeof message.content === 'string' ? message.content : ''
  const refusal = typeof message.refusal === 'string' ? message.refusal : ''
  if (text !== '' || refusal !== '') content.push({ type: 'text', text: text + refusal, citations: null })
  for (const call of message.tool_calls ?? [])
    if (call?.type === 'function')
      content.push({
        type: 'tool_use',
        id: call.id,
        name: call.function?.name,
        input: argumentsOf(call.function?.arguments),
        caller: DIRECT,
      })
  return {
    id: String(completion.id ?? ''),
    type: 'message',
    role: 'assistant',
    model: options.model ?? String(completion.model ?? ''),
    content,
    stop_reason: refusal !== '' ? 'refusal' : stopReasonOf(choice.finish_reason),
    stop_sequence: null,
    usage: anthropicUsageOf(completion.usage),
  }
}
