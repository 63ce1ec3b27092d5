import * as v from 'valibot'
import { parseRequest } from './validate.js'

// The OpenAI chat-completions request as the official SDKs send it (openai-node's
// resources/chat/completions ChatCompletionCreateParams): what is translated is checked, everything is kept, so a
// member we do not know still reaches an OpenAI-compatible upstream.

// A string, or an array of the given items: each checked as what it is, so an issue names its member.
const stringOr = <S extends v.GenericSchema>(items: S) =>
  v.lazy((input) => (typeof input === 'string' ? v.string() : v.array(items)))
const other = (...known: string[]) => v.looseObject({ type: v.pipe(v.string(), v.notValues(known)) })
const nullish = <S extends v.GenericSchema>(schema: S) => v.nullish(schema)
const count = v.pipe(v.number(), v.integer(), v.minValue(0))
const JsonObject = v.record(v.string(), v.unknown())

const CacheBreakpoint = v.looseObject({ mode: v.literal('explicit') })
const TextPart = v.looseObject({
  type: v.literal('text'),
  text: v.string(),
  prompt_cache_breakpoint: v.optional(CacheBreakpoint),
})
const ImagePart = v.looseObject({
  type: v.literal('image_url'),
  image_url: v.looseObject({ url: v.string(), detail: v.optional(v.picklist(['auto', 'low', 'high'])) }),
  prompt_cache_breakpoint: v.optional(CacheBreakpoint),
})
const RefusalPart = v.looseObject({ type: v.literal('refusal'), refusal: v.string() })
const UserPart = v.variant('type', [TextPart, ImagePart, other('text', 'image_url')])
const AssistantPart = v.variant('type', [TextPart, RefusalPart, other('text', 'refusal')])
const TextOnlyPart = v.variant('type', [TextPart, other('text')])

const FunctionToolCall = v.looseObject({
  id: v.string(),
  type: v.literal('function'),
  function: v.looseObject({ name: v.string(), arguments: v.string() }),
})

const InstructionMessage = <R extends string>(role: R) =>
  v.looseObject({
    role: v.literal(role),
    content: stringOr(TextOnlyPart),
    name: v.optional(v.string()),
  })

const UserMessage = v.looseObject({
  role: v.literal('user'),
  content: stringOr(UserPart),
  name: v.optional(v.string()),
})
const AssistantMessage = v.looseObject({
  role: v.literal('assistant'),
  content: nullish(stringOr(AssistantPart)),
  refusal: nullish(v.string()),
  name: v.optional(v.string()),
  tool_calls: v.optional(v.array(v.variant('type', [FunctionToolCall, other('function')]))),
})
const ToolMessage = v.looseObject({
  role: v.literal('tool'),
  tool_call_id: v.string(),
  content: stringOr(TextOnlyPart),
})
const FunctionMessage = v.looseObject({
  role: v.literal('function'),
  name: v.string(),
  content: v.nullable(v.string()),
})

const FunctionTool = v.looseObject({
  type: v.literal('function'),
  function: v.looseObject({
    name: v.pipe(v.string(), v.minLength(1)),
    description: v.optional(v.string()),
    parameters: v.optional(JsonObject),
    strict: nullish(v.boolean()),
  }),
})

const NamedToolChoice = v.looseObject({ type: v.literal('function'), function: v.looseObject({ name: v.string() }) })
const ToolChoice = v.union([
  v.picklist(['none', 'auto', 'required']),
  v.variant('type', [NamedToolChoice, other('function')]),
])

const JsonSchemaFormat = v.looseObject({
  type: v.literal('json_schema'),
  json_schema: v.looseObject({
    name: v.string(),
    description: v.optional(v.string()),
    schema: v.optional(JsonObject),
    strict: nullish(v.boolean()),
  }),
})
const ResponseFormat = v.variant('type', [
  v.looseObject({ type: v.literal('text') }),
  v.looseObject({ type: v.literal('json_object') }),
  JsonSchemaFormat,
])

const ChatRequestSchema = v.looseObject({
  model: v.pipe(v.string(), v.minLength(1)),
  messages: v.pipe(
    v.array(
      v.variant('role', [
        InstructionMessage('system'),
        InstructionMessage('developer'),
        UserMessage,
        AssistantMessage,
        ToolMessage,
        FunctionMessage,
      ])
    ),
    v.minLength(1, 'must hold at least one message')
  ),
  max_tokens: nullish(v.pipe(count, v.minValue(1))),
  max_completion_tokens: nullish(v.pipe(count, v.minValue(1))),
  temperature: nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(2))),
  top_p: nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  n: nullish(v.pipe(count, v.minValue(1))),
  stop: nullish(v.union([v.string(), v.array(v.string())])),
  stream: nullish(v.boolean()),
  stream_options: nullish(v.looseObject({ include_usage: v.optional(v.boolean()) })),
  metadata: nullish(v.record(v.string(), v.string())),
  user: v.optional(v.string()),
  safety_identifier: nullish(v.string()),
  tools: v.optional(v.array(v.variant('type', [FunctionTool, other('function')]))),
  tool_choice: v.optional(ToolChoice),
  parallel_tool_calls: v.optional(v.boolean()),
  response_format: v.optional(ResponseFormat),
  logprobs: nullish(v.boolean()),
  top_logprobs: nullish(count),
})

export type ChatRequest = v.InferOutput<typeof ChatRequestSchema>
export type ChatMessage = ChatRequest['messages'][number]

// A chat-completions body, or a 400 naming each bad member.
export const readChatRequest = (body: unknown): ChatRequest => parseRequest(ChatRequestSchema, body)
