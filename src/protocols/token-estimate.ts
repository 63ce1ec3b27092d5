import type { Json } from './refused.js'

// An estimate of a count_tokens request's input tokens, for an upstream that cannot count them (an OpenAI-compatible
// one has no such endpoint): a quarter of the UTF-8 bytes of its text, rounded up, plus IMAGE_TOKENS per image. The
// text is the system prompt, the text blocks, each tool use's name and input (as JSON), each tool result's text,
// each tool's name, description and input schema (as JSON), and the structured output's schema (as JSON).

// What Anthropic charges an image at the largest size it takes without scaling it down (about 1.15 megapixels at
// width × height / 750 tokens): the size is not read, so the estimate is an upper bound.
const IMAGE_TOKENS = 1600

interface Tally {
  bytes: number
  images: number
}

const text = (tally: Tally, s: unknown) => {
  if (typeof s === 'string') tally.bytes += Buffer.byteLength(s)
}
const json = (tally: Tally, value: unknown) => {
  if (value !== undefined) text(tally, JSON.stringify(value))
}

function content(tally: Tally, value: unknown) {
  if (typeof value === 'string') return text(tally, value)
  if (Array.isArray(value)) for (const block of value) blockOf(tally, block as Json)
}

function blockOf(tally: Tally, block: Json) {
  switch (block.type) {
    case 'text':
      return text(tally, block.text)
    case 'image':
      tally.images++
      return
    case 'tool_use':
      text(tally, block.name)
      return json(tally, block.input)
    case 'tool_result':
      return content(tally, block.content)
    default:
      // A block the estimate does not know (the route refuses those an OpenAI-compatible upstream cannot take).
      return json(tally, block)
  }
}

export function estimateInputTokens(request: Json): number {
  const tally: Tally = { bytes: 0, images: 0 }
  content(tally, request.system)
  for (const message of request.messages ?? []) content(tally, message.content)
  for (const tool of request.tools ?? []) {
    text(tally, tool.name)
    text(tally, tool.description)
    json(tally, tool.input_schema)
  }
  json(tally, (request.output_config?.format ?? request.output_format)?.schema)
  return Math.ceil(tally.bytes / 4) + tally.images * IMAGE_TOKENS
}
