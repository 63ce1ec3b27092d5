import * as v from 'valibot'
import { COMPLETION } from '../api/schemas.js'
import type { ApiError } from '../http/errors.js'
import type { ChatRequest } from '../protocols/openai-schema.js'
import type { MessagesRequest } from '../protocols/anthropic-schema.js'
import { AnthropicStreamFromOpenAI } from '../protocols/anthropic-stream.js'
import { anthropicStreamError, openaiStreamError, untranslatable } from '../protocols/errors.js'
import { OpenAIStreamFromAnthropic } from '../protocols/openai-stream.js'
import type { Json } from '../protocols/refused.js'
import { type SseEvent, sseText } from '../protocols/sse-events.js'
import { anthropicMessageOf, anthropicRequestOf } from '../protocols/to-anthropic.js'
import { openaiCompletionOf, openaiRequestOf } from '../protocols/to-openai.js'
import { parseRequest } from '../protocols/validate.js'
import type { Protocol, ProtocolCall } from './call.js'
import type { CallerProtocol, Relay } from './context.js'

// A caller of the OpenAI- or Anthropic-compatible routes: its body for each upstream protocol its call may reach,
// and its answers, whole and streamed, whichever upstream gave them. The same protocol passes through with only
// `model` changed (the upstream's on the way in, the caller's alias on the way out); the other is translated
// (src/protocols/). A member the other protocol cannot express is refused before any upstream call, when an
// upstream of that protocol is in the fallback list: the call may reach it.

// One quota unit bounds what a call costs, as on the native route: one answer (n = 1) of at most
// COMPLETION.maxTokens tokens, COMPLETION.defaultMaxTokens when the caller names none.
const tokenBound = v.nullish(
  v.pipe(v.number(), v.maxValue(COMPLETION.maxTokens, `must be at most ${COMPLETION.maxTokens} (one quota unit)`))
)
const OpenAIUnit = v.looseObject({
  max_tokens: tokenBound,
  max_completion_tokens: tokenBound,
  n: v.nullish(v.literal(1, 'must be 1 (one quota unit is one answer)')),
})
const AnthropicUnit = v.looseObject({ max_tokens: tokenBound })

export function openaiWithinUnit(request: ChatRequest): ChatRequest {
  parseRequest(OpenAIUnit, request)
  if (request.max_tokens != null || request.max_completion_tokens != null) return request
  return { ...request, max_tokens: COMPLETION.defaultMaxTokens }
}

export function anthropicWithinUnit(request: MessagesRequest): MessagesRequest {
  parseRequest(AnthropicUnit, request)
  return request
}

// An OpenAI stream's usage comes only when asked for, and the record needs it: always asked of the upstream, and
// passed on only when the caller asked.
function openaiUpstreamBody(request: ChatRequest): Json {
  if (!request.stream) return request
  return { ...request, stream_options: { ...request.stream_options, include_usage: true } }
}

export function openaiBodies(request: ChatRequest, upstreams: Protocol[]): ProtocolCall['bodies'] {
  const bodies: ProtocolCall['bodies'] = {}
  if (upstreams.includes('openai')) bodies.openai = openaiUpstreamBody(request)
  if (upstreams.includes('anthropic')) {
    const { body, refused } = anthropicRequestOf(request)
    if (refused.length > 0) throw untranslatable(refused, 'Anthropic')
    bodies.anthropic = body
  }
  return bodies
}

export function anthropicBodies(request: MessagesRequest, upstreams: Protocol[]): ProtocolCall['bodies'] {
  const bodies: ProtocolCall['bodies'] = {}
  if (upstreams.includes('anthropic')) bodies.anthropic = request
  if (upstreams.includes('openai')) {
    const { body, refused } = openaiRequestOf(request)
    if (refused.length > 0) throw untranslatable(refused, 'OpenAI')
    bodies.openai = body
  }
  return bodies
}

// An OpenAI-compatible upstream's chunks to an OpenAI caller: the alias for the model, and the usage (which the
// upstream was asked for) only when the caller asked for it too.
function openaiPassThrough(model: string, includeUsage: boolean): Relay {
  return {
    push(_type, data) {
      if (data === '[DONE]') return [{ data }]
      const chunk = JSON.parse(data) as Json
      if (!includeUsage && 'usage' in chunk) {
        if (Array.isArray(chunk.choices) && chunk.choices.length === 0) return []
        delete chunk.usage
      }
      return [{ data: JSON.stringify({ ...chunk, model }) }]
    },
  }
}

// An Anthropic upstream's events to an Anthropic caller: each as it came, the alias in message_start's model.
function anthropicPassThrough(model: string): Relay {
  return {
    push(type, data) {
      if (type !== 'message_start') return [{ event: type, data }]
      const e = JSON.parse(data) as Json
      return [{ event: type, data: JSON.stringify({ ...e, message: { ...e.message, model } }) }]
    },
  }
}

// The Anthropic events translated from an OpenAI stream, with the ping Anthropic sends after message_start.
function anthropicFromOpenAI(model: string): Relay {
  const translator = new AnthropicStreamFromOpenAI({ model })
  let pinged = false
  return {
    push(type, data) {
      const events: SseEvent[] = translator.push(type, data)
      if (pinged || events.length === 0) return events
      pinged = true
      return [events[0], { event: 'ping', data: '{"type":"ping"}' }, ...events.slice(1)]
    },
  }
}

export function openaiCaller(model: string, request: ChatRequest): CallerProtocol {
  const includeUsage = request.stream_options?.include_usage === true
  return {
    whole: (protocol, body) =>
      protocol === 'openai' ? { ...(body as Json), model } : openaiCompletionOf(body as Json, { model }),
    relay: (protocol) =>
      protocol === 'openai'
        ? openaiPassThrough(model, includeUsage)
        : new OpenAIStreamFromAnthropic({ includeUsage, created: Math.floor(Date.now() / 1000), model }),
    errorEvent: (e: ApiError) => sseText([openaiStreamError(e)]),
  }
}

export function anthropicCaller(model: string): CallerProtocol {
  return {
    whole: (protocol, body) =>
      protocol === 'anthropic' ? { ...(body as Json), model } : anthropicMessageOf(body as Json, { model }),
    relay: (protocol) => (protocol === 'anthropic' ? anthropicPassThrough(model) : anthropicFromOpenAI(model)),
    errorEvent: (e: ApiError) => sseText([anthropicStreamError(e)]),
  }
}
