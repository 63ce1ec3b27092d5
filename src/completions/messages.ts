import { AnthropicMessage, AnthropicMessagesRequest, AnthropicStreamEvent } from '../api/sdk-schemas.js'
import { BASE, type Exchange, route, type Route } from '../http/route.js'
import { readMessagesRequest } from '../protocols/anthropic-schema.js'
import { aliasOf } from './aliases.js'
import { anthropicBodies, anthropicCaller, anthropicWithinUnit } from './caller-protocols.js'
import { COST_HEADER, completeCall, SERVER_TIMING } from './complete.js'
import type { CompletionsDeps } from './completions.js'
import { anthropicErrors } from './protocol-errors.js'

// POST /api/v1/messages: the Anthropic SDKs' Messages (base URL `…/api`, to which they add `/v1/messages`), one
// completion as the native route's, to upstreams of either protocol. The key may come in `x-api-key`, the header
// the Python SDK and older TypeScript ones send.
export function messagesRoute(deps: CompletionsDeps): Route {
  return route({
    method: 'POST',
    path: `${BASE}/messages`,
    uses: ['key', 'quota', 'upstream', 'alias'],
    scope: 'completions:write',
    apiKeyHeader: true,
    body: AnthropicMessagesRequest,
    errors: anthropicErrors,
    summary: 'Create a message (Anthropic-compatible), whole or streamed',
    operationId: 'createMessage',
    responses: {
      200: {
        description: 'The message, or with `stream: true` its events',
        schema: AnthropicMessage,
        headers: { 'Server-Timing': SERVER_TIMING, 'x-studio-cost-usd': COST_HEADER },
        events: {
          description:
            "Anthropic's events: `message_start`, `content_block_start`, `content_block_delta` (`text_delta`, " +
            '`input_json_delta`), `content_block_stop`, `message_delta` (the stop reason and usage), ' +
            '`message_stop`, and `ping`; a failure after the first event is an `error` event.',
          data: {
            message_start: AnthropicStreamEvent,
            content_block_start: AnthropicStreamEvent,
            content_block_delta: AnthropicStreamEvent,
            content_block_stop: AnthropicStreamEvent,
            message_delta: AnthropicStreamEvent,
            message_stop: AnthropicStreamEvent,
            ping: AnthropicStreamEvent,
          },
          errors: ['upstream_error', 'quota_exceeded', 'key_quota_exceeded', 'budget_exceeded', 'service_unavailable'],
        },
      },
    },
    handle: (x) => message(deps, x),
  })
}

function message(deps: CompletionsDeps, x: Exchange<unknown>) {
  const request = anthropicWithinUnit(readMessagesRequest(x.body))
  const alias = aliasOf(request.model, deps.upstreams.aliases(), x.principal)
  const bodies = anthropicBodies(request, deps.upstreams.protocols())
  const stream = request.stream === true
  return completeCall(deps, x, { alias, call: { bodies }, stream, caller: anthropicCaller(request.model) })
}
