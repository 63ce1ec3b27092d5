import * as v from 'valibot'
import { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../api/sdk-schemas.js'
import { BASE, type Exchange, route, type Route } from '../http/route.js'
import { readChatRequest } from '../protocols/openai-schema.js'
import { aliasOf } from './aliases.js'
import { openaiBodies, openaiCaller, openaiWithinUnit } from './caller-protocols.js'
import { COST_HEADER, completeCall, SERVER_TIMING } from './complete.js'
import type { CompletionsDeps } from './completions.js'
import { openaiErrors } from './protocol-errors.js'

// POST /api/v1/chat/completions: the OpenAI SDKs' chat completions (base URL `…/api/v1`), one completion as the
// native route's, to upstreams of either protocol.
export function chatCompletionsRoute(deps: CompletionsDeps): Route {
  return route({
    method: 'POST',
    path: `${BASE}/chat/completions`,
    uses: ['key', 'quota', 'upstream', 'alias'],
    scope: 'completions:write',
    body: ChatCompletionRequest,
    errors: openaiErrors,
    summary: 'Create a chat completion (OpenAI-compatible), whole or streamed',
    operationId: 'createChatCompletion',
    responses: {
      200: {
        description: 'The chat completion, or with `stream: true` its chunks',
        schema: ChatCompletion,
        headers: { 'Server-Timing': SERVER_TIMING, 'x-studio-cost-usd': COST_HEADER },
        events: {
          description:
            'Server-sent events without names, as OpenAI sends them: `chat.completion.chunk` objects (each tool ' +
            "call's index, id and name first, then its arguments in pieces), a usage chunk when " +
            '`stream_options.include_usage`, then `data: [DONE]`; a failure after the first chunk is an error object.',
          data: { message: v.union([ChatCompletionChunk, StreamError]) },
          errors: ['upstream_error', 'quota_exceeded', 'key_quota_exceeded', 'budget_exceeded', 'service_unavailable'],
          terminator: '[DONE]',
        },
      },
    },
    handle: (x) => chatCompletion(deps, x),
  })
}

const StreamError = v.looseObject({ error: v.looseObject({ message: v.string(), code: v.string() }) })

function chatCompletion(deps: CompletionsDeps, x: Exchange<unknown>) {
  const request = openaiWithinUnit(readChatRequest(x.body))
  const alias = aliasOf(request.model, deps.upstreams.aliases(), x.principal)
  const bodies = openaiBodies(request, deps.upstreams.protocols())
  const stream = request.stream === true
  const caller = openaiCaller(request.model, request)
  return completeCall(deps, x, { alias, call: { bodies }, stream, caller })
}
