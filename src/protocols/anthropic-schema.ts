import * as v from 'valibot'
import { parseRequest } from './validate.js'

// The Anthropic Messages request (and count_tokens) as the official SDKs send them (anthropic-sdk-typescript's
// resources/messages MessageCreateParams, MessageCountTokensParams): what is translated is checked, everything is
// kept, so a member we do not know still reaches an Anthropic upstream. temperature, top_p and top_k left the
// current SDK's types but older SDKs send them and the API takes them for older models.

// A string, or an array of the given items: each checked as what it is, so an issue names its member.
const stringOr = <S extends v.GenericSchema>(items: S) =>
  v.lazy((input) => (typeof input === 'string' ? v.string() : v.array(items)))
const other = (...known: string[]) => v.looseObject({ type: v.pipe(v.string(), v.notValues(known)) })
const JsonObject = v.record(v.string(), v.unknown())
const CacheControl = v.nullish(
  v.looseObject({ type: v.literal('ephemeral'), ttl: v.optional(v.picklist(['5m', '1h'])) })
)

const TextBlock = v.looseObject({ type: v.literal('text'), text: v.string(), cache_control: CacheControl })
const ImageSource = v.variant('type', [
  v.looseObject({
    type: v.literal('base64'),
    media_type: v.picklist(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
    data: v.string(),
  }),
  v.looseObject({ type: v.literal('url'), url: v.string() }),
  other('base64', 'url'),
])
const ImageBlock = v.looseObject({ type: v.literal('image'), source: ImageSource, cache_control: CacheControl })
const ToolUseBlock = v.looseObject({
  type: v.literal('tool_use'),
  id: v.string(),
  name: v.string(),
  input: JsonObject,
  cache_control: CacheControl,
})
const ToolResultBlock = v.looseObject({
  type: v.literal('tool_result'),
  tool_use_id: v.string(),
  content: v.optional(stringOr(v.variant('type', [TextBlock, ImageBlock, other('text', 'image')]))),
  is_error: v.optional(v.boolean()),
  cache_control: CacheControl,
})
const Block = v.variant('type', [
  TextBlock,
  ImageBlock,
  ToolUseBlock,
  ToolResultBlock,
  other('text', 'image', 'tool_use', 'tool_result'),
])

const System = stringOr(TextBlock)
const Message = v.variant('role', [
  v.looseObject({ role: v.literal('user'), content: stringOr(Block) }),
  v.looseObject({ role: v.literal('assistant'), content: stringOr(Block) }),
  v.looseObject({ role: v.literal('system'), content: System }),
])

// A client tool (no type, or `custom`) has its JSON schema; a server tool (`web_search_20250305`, …) its own members.
const CustomTool = v.looseObject({
  type: v.optional(v.nullable(v.literal('custom'))),
  name: v.pipe(v.string(), v.minLength(1)),
  description: v.optional(v.string()),
  input_schema: v.looseObject({ type: v.literal('object') }),
  strict: v.optional(v.boolean()),
  cache_control: CacheControl,
})
const ServerTool = v.looseObject({ type: v.pipe(v.string(), v.notValue('custom')), name: v.string() })

const parallel = { disable_parallel_tool_use: v.optional(v.boolean()) }
const ToolChoice = v.variant('type', [
  v.looseObject({ type: v.literal('auto'), ...parallel }),
  v.looseObject({ type: v.literal('any'), ...parallel }),
  v.looseObject({ type: v.literal('tool'), name: v.string(), ...parallel }),
  v.looseObject({ type: v.literal('none') }),
])

const JsonOutputFormat = v.looseObject({ type: v.literal('json_schema'), schema: JsonObject })

const shared = {
  model: v.pipe(v.string(), v.minLength(1)),
  messages: v.array(Message),
  system: v.optional(System),
  tools: v.optional(
    v.array(v.lazy((tool) => (((tool as { type?: unknown })?.type ?? 'custom') === 'custom' ? CustomTool : ServerTool)))
  ),
  tool_choice: v.optional(ToolChoice),
  output_config: v.optional(v.looseObject({ format: v.nullish(JsonOutputFormat), effort: v.nullish(v.string()) })),
  // The structured-output member of the beta SDKs (with the structured-outputs beta header).
  output_format: v.nullish(JsonOutputFormat),
  thinking: v.optional(v.looseObject({ type: v.string() })),
  cache_control: CacheControl,
}

const MessagesRequestSchema = v.looseObject({
  ...shared,
  max_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)),
  metadata: v.optional(v.looseObject({ user_id: v.nullish(v.string()) })),
  stop_sequences: v.optional(v.array(v.string())),
  stream: v.optional(v.boolean()),
  temperature: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  top_p: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  top_k: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
})

const CountTokensRequestSchema = v.looseObject(shared)

export type MessagesRequest = v.InferOutput<typeof MessagesRequestSchema>
export type AnthropicBlock = v.InferOutput<typeof Block>

// A Messages body, or a 400 naming each bad member.
export const readMessagesRequest = (body: unknown): MessagesRequest => parseRequest(MessagesRequestSchema, body)

// A count_tokens body, or a 400 naming each bad member.
export const readCountTokensRequest = (body: unknown) => parseRequest(CountTokensRequestSchema, body)
