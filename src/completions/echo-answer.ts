import type { Json } from '../protocols/refused.js'

// What the echo upstream answers a chat-completions request, the same for the same request:
// - a tool call, when the request offers tools, its tool_choice is not `none`, the last message is the user's, and
//   tool_choice is `required` (the first tool), names a tool (that one), or is `auto`/absent and the last message's
//   text names an offered tool (the first it names). Its arguments fill the tool's required parameters with samples.
// - else the text of the last message (a tool's result after a tool call), cut to max_tokens words (`length`).
// A token is a word (a run of non-space characters): the prompt's tokens are the words of every message's text, the
// answer's those of its text or of its tool call's arguments.

export interface EchoAnswer {
  text: string | null
  toolCall: { id: string; name: string; arguments: string } | null
  finishReason: 'stop' | 'length' | 'tool_calls'
  promptTokens: number
  completionTokens: number
}

const words = (text: string) => text.match(/\S+/g)?.length ?? 0

// A message's text: its string content, or its text parts joined.
function textOf(message: Json): string {
  const { content } = message
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((part: Json) => (part?.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('')
}

// A value its JSON schema accepts, for the schemas tools usually have.
function sample(schema: Json | undefined): unknown {
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return schema.enum[0]
  switch (schema?.type) {
    case 'string':
      return 'echo'
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0
    case 'boolean':
      return false
    case 'array':
      return []
    case 'object': {
      const out: Json = {}
      for (const name of Array.isArray(schema.required) ? schema.required : [])
        out[name] = sample(schema.properties?.[name])
      return out
    }
    default:
      return null
  }
}

function toolToCall(request: Json, last: Json): Json | null {
  const tools: Json[] = (request.tools ?? []).filter((t: Json) => t?.type === 'function')
  const choice = request.tool_choice ?? 'auto'
  if (tools.length === 0 || choice === 'none' || last.role !== 'user') return null
  if (choice === 'required') return tools[0].function
  if (typeof choice === 'object')
    return tools.find((t) => t.function.name === choice.function?.name)?.function ?? tools[0].function
  const text = textOf(last)
  return tools.find((t) => text.includes(t.function.name))?.function ?? null
}

export function echoAnswer(request: Json): EchoAnswer {
  const messages: Json[] = request.messages ?? []
  const last = messages.at(-1) ?? {}
  const promptTokens = messages.reduce((n, m) => n + words(textOf(m)), 0)
  const tool = toolToCall(request, last)
  if (tool) {
    const args = JSON.stringify(sample({ type: 'object', ...tool.parameters }) ?? {})
    const toolCall = { id: `call_echo_${messages.length}`, name: String(tool.name), arguments: args }
    return {
      text: null,
      toolCall,
      finishReason: 'tool_calls',
      promptTokens,
      completionTokens: Math.max(1, words(args)),
    }
  }
  const limit = request.max_completion_tokens ?? request.max_tokens ?? Number.POSITIVE_INFINITY
  const pieces = textOf(last).match(/\S+\s*/g) ?? []
  const cut = pieces.length > limit
  const text = cut ? pieces.slice(0, limit).join('').trimEnd() : pieces.join('')
  const finishReason = cut ? 'length' : 'stop'
  return { text, toolCall: null, finishReason, promptTokens, completionTokens: words(text) }
}
