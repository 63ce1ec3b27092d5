import type { Dispatcher } from 'undici'
import type { Handler, Transport } from '../ops/transport.js'
import type { Json } from '../protocols/refused.js'
import type { Adapter, UpstreamConfig } from './call.js'
import { type EchoAnswer, echoAnswer } from './echo-answer.js'
import { openaiAdapter } from './openai.js'
import { configuredAliases } from '../ops/model-aliases.js'

// STUDIO_UPSTREAM=echo: an OpenAI-compatible upstream inside the process, for trying the API and for integration
// tests without a provider. It is the openai adapter over a transport of its own that answers each request, whole or
// streamed word by word, as echo-answer.ts says, with no socket: the call goes through the same path as any other
// (quota, retries, fallback, records, streaming), and Anthropic callers get its answers translated.

const MODEL = 'echo'
const ORIGIN = 'http://echo.invalid'

const chunk = (model: string, delta: Json, finish: string | null = null) =>
  JSON.stringify({
    id: 'chatcmpl-echo',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  })

const usageOf = (a: EchoAnswer) => ({
  prompt_tokens: a.promptTokens,
  completion_tokens: a.completionTokens,
  total_tokens: a.promptTokens + a.completionTokens,
})

const toolCallOf = (a: EchoAnswer) =>
  a.toolCall && {
    id: a.toolCall.id,
    type: 'function',
    function: { name: a.toolCall.name, arguments: a.toolCall.arguments },
  }

function wholeBody(model: string, a: EchoAnswer): string {
  const message: Json = { role: 'assistant', content: a.text, refusal: null }
  if (a.toolCall) message.tool_calls = [toolCallOf(a)]
  return JSON.stringify({
    id: 'chatcmpl-echo',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: a.finishReason, logprobs: null }],
    usage: usageOf(a),
  })
}

// The stream's events, one write each: the role, each word (or the tool call), the finish, the usage when asked.
function streamEvents(model: string, a: EchoAnswer, includeUsage: boolean): string[] {
  const data = [chunk(model, { role: 'assistant', content: a.toolCall ? null : '' })]
  for (const word of a.text?.match(/\s*\S+\s*/g) ?? []) data.push(chunk(model, { content: word }))
  if (a.toolCall) data.push(chunk(model, { tool_calls: [{ index: 0, ...toolCallOf(a) }] }))
  data.push(chunk(model, {}, a.finishReason))
  if (includeUsage)
    data.push(
      JSON.stringify({ id: 'chatcmpl-echo', object: 'chat.completion.chunk', model, choices: [], usage: usageOf(a) })
    )
  data.push('[DONE]')
  return data.map((d) => `data: ${d}\n\n`)
}

function answer(request: Json): { type: string; writes: string[] } {
  const model = typeof request.model === 'string' ? request.model : MODEL
  const a = echoAnswer(request)
  if (!request.stream) return { type: 'application/json', writes: [wholeBody(model, a)] }
  return { type: 'text/event-stream', writes: streamEvents(model, a, request.stream_options?.include_usage === true) }
}

// Calls the handler as undici's core would for a 200 (or a 400 for a body that is not JSON), one write per tick so
// that an abort between two words ends the stream as a broken connection would.
function respond(options: Dispatcher.DispatchOptions, handler: Handler) {
  let stopped: Error | null = null
  handler.onConnect?.((e) => {
    stopped ??= e ?? new Error('aborted')
  })
  if (stopped) return handler.onError(stopped)
  let reply: { status: number; type: string; writes: string[] }
  try {
    reply = { status: 200, ...answer(JSON.parse(String(options.body))) }
  } catch (e) {
    const error = { message: `echo could not read the request: ${(e as Error).message}`, type: 'invalid_request_error' }
    reply = { status: 400, type: 'application/json', writes: [JSON.stringify({ error })] }
  }
  handler.onBodySent?.(0, 0)
  const headers = [Buffer.from('content-type'), Buffer.from(reply.type)]
  handler.onHeaders?.(reply.status, headers, () => {}, reply.status === 200 ? 'OK' : 'Bad Request')
  const next = (i: number) => {
    if (stopped) return handler.onError(stopped)
    if (i === reply.writes.length) return handler.onComplete?.([])
    handler.onData?.(Buffer.from(reply.writes[i]))
    setImmediate(next, i + 1)
  }
  next(0)
}

const echoTransport: Transport = {
  dispatch(options, handler) {
    setImmediate(respond, options, handler)
    return true
  },
  close: async () => {},
  destroy: async () => {},
}

export function echoAdapter(config: UpstreamConfig): Adapter {
  const openai = openaiAdapter({ ...config, OPENAI_BASE_URL: ORIGIN, OPENAI_API_KEY: undefined })
  // One model, whatever the alias.
  const models = Object.fromEntries(configuredAliases(config).map((alias) => [alias, MODEL]))
  return { ...openai, name: 'echo', models, transport: echoTransport }
}
