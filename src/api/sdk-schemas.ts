import * as v from 'valibot'

// The bodies of the OpenAI-compatible route as the OpenAPI document describes them: the members every request and
// answer has, any other allowed (an upstream of the same protocol gets, and gives, its own). The route checks a
// request in full against the protocol's schema (protocols/openai-schema.ts), which a 400 names the members of.

export const ChatCompletionRequest = v.pipe(
  v.looseObject({
    model: v.pipe(v.string(), v.description('A model alias: `primary`, `fast` or one the operator configured.')),
    messages: v.array(v.looseObject({ role: v.string() })),
    stream: v.nullish(v.boolean()),
  }),
  v.title('ChatCompletionRequest'),
  v.description("OpenAI's chat-completions request, as the official SDKs send it.")
)

const Usage = v.looseObject({
  prompt_tokens: v.number(),
  completion_tokens: v.number(),
  total_tokens: v.number(),
})

const ToolCall = v.looseObject({
  id: v.string(),
  type: v.literal('function'),
  function: v.looseObject({ name: v.string(), arguments: v.string() }),
})

export const ChatCompletion = v.pipe(
  v.looseObject({
    id: v.string(),
    object: v.literal('chat.completion'),
    // A same-protocol upstream's own answer may lack it.
    created: v.optional(v.number()),
    model: v.pipe(v.string(), v.description('The model alias the request named.')),
    choices: v.array(
      v.looseObject({
        index: v.number(),
        message: v.looseObject({
          role: v.literal('assistant'),
          content: v.nullable(v.string()),
          tool_calls: v.optional(v.array(ToolCall)),
        }),
        finish_reason: v.nullable(v.string()),
      })
    ),
    usage: v.optional(Usage),
  }),
  v.title('ChatCompletion')
)

export const ChatCompletionChunk = v.pipe(
  v.looseObject({
    id: v.string(),
    object: v.literal('chat.completion.chunk'),
    model: v.string(),
    choices: v.array(
      v.looseObject({ index: v.number(), delta: v.looseObject({}), finish_reason: v.nullish(v.string()) })
    ),
    usage: v.nullish(Usage),
  }),
  v.title('ChatCompletionChunk')
)

const OpenAIModelList = v.pipe(
  v.looseObject({
    object: v.literal('list'),
    data: v.array(
      v.looseObject({ id: v.string(), object: v.literal('model'), created: v.number(), owned_by: v.string() })
    ),
  }),
  v.title('OpenAIModelList')
)

const AnthropicModelList = v.pipe(
  v.looseObject({
    data: v.array(
      v.looseObject({ type: v.literal('model'), id: v.string(), display_name: v.string(), created_at: v.string() })
    ),
    has_more: v.boolean(),
    first_id: v.nullable(v.string()),
    last_id: v.nullable(v.string()),
  }),
  v.title('AnthropicModelList')
)

export const ModelList = v.union([OpenAIModelList, AnthropicModelList])

export const AnthropicMessagesRequest = v.pipe(
  v.looseObject({
    model: v.pipe(v.string(), v.description('A model alias: `primary`, `fast` or one the operator configured.')),
    max_tokens: v.number(),
    messages: v.array(v.looseObject({ role: v.string() })),
    stream: v.optional(v.boolean()),
  }),
  v.title('AnthropicMessagesRequest'),
  v.description("Anthropic's Messages request, as the official SDKs send it.")
)

export const AnthropicMessage = v.pipe(
  v.looseObject({
    id: v.string(),
    type: v.literal('message'),
    role: v.literal('assistant'),
    model: v.pipe(v.string(), v.description('The model alias the request named.')),
    content: v.array(v.looseObject({ type: v.string() })),
    stop_reason: v.nullable(v.string()),
    usage: v.looseObject({ input_tokens: v.number(), output_tokens: v.number() }),
  }),
  v.title('AnthropicMessage')
)

export const AnthropicStreamEvent = v.pipe(v.looseObject({ type: v.string() }), v.title('AnthropicStreamEvent'))

export const AnthropicCountTokensRequest = v.pipe(
  v.looseObject({
    model: v.pipe(v.string(), v.description('A model alias: `primary`, `fast` or one the operator configured.')),
    messages: v.array(v.looseObject({ role: v.string() })),
  }),
  v.title('AnthropicCountTokensRequest'),
  v.description("Anthropic's count_tokens request: a Messages request without `max_tokens` and `stream`.")
)

export const AnthropicTokenCount = v.pipe(v.looseObject({ input_tokens: v.number() }), v.title('AnthropicTokenCount'))
