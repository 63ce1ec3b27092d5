import { AnthropicCountTokensRequest, AnthropicTokenCount } from '../api/sdk-schemas.js'
import { BASE, type Exchange, type Reply, route, type Route } from '../http/route.js'
import { readCountTokensRequest } from '../protocols/anthropic-schema.js'
import { estimateInputTokens } from '../protocols/token-estimate.js'
import { CallAbort } from './abort.js'
import { aliasOf } from './aliases.js'
import { type Adapter, UpstreamFailure } from './call.js'
import { anthropicBodies } from './caller-protocols.js'
import type { CompletionsDeps } from './completions.js'
import { anthropicErrors } from './protocol-errors.js'
import { callUpstream } from './retries.js'

// POST /api/v1/messages/count_tokens: the Anthropic SDKs' `messages.countTokens` (base URL `…/api`). It counts for
// the alias's first upstream: an Anthropic one counts (its own count_tokens, the model rewritten), an
// OpenAI-compatible one has no such endpoint, so the answer is an estimate (protocols/token-estimate.ts), marked
// with `x-studio-token-estimate: true`. No quota unit, no record: it is not a completion; the rate limit counts it.
export function countTokensRoute(deps: CompletionsDeps): Route {
  return route({
    method: 'POST',
    path: `${BASE}/messages/count_tokens`,
    uses: ['key', 'upstream', 'alias'],
    scope: 'completions:write',
    apiKeyHeader: true,
    body: AnthropicCountTokensRequest,
    errors: anthropicErrors,
    summary: "Count a message's input tokens (Anthropic-compatible); spends no quota unit",
    operationId: 'countMessageTokens',
    responses: {
      200: {
        description:
          "The input tokens, as the alias's first upstream counted them (an Anthropic one), or estimated (an " +
          'OpenAI-compatible one): a quarter of the UTF-8 bytes of the text, rounded up, plus 1600 per image',
        schema: AnthropicTokenCount,
        headers: {
          'x-studio-token-estimate': {
            description: '`true` when the count is an estimate; absent when the upstream counted.',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      },
    },
    handle: (x) => countTokens(deps, x),
  })
}

const ESTIMATED = { 'x-studio-token-estimate': 'true' }

async function countTokens(deps: CompletionsDeps, x: Exchange<unknown>): Promise<Reply> {
  const request = readCountTokensRequest(x.body)
  const alias = aliasOf(request.model, deps.upstreams.aliases(), x.principal)
  // A count is of what POST /messages would send: the same body is refused here for the same members.
  anthropicBodies({ ...request, max_tokens: 1 }, deps.upstreams.protocols())
  const off = deps.upstreams.notConfigured()
  if (off) throw off
  const upstream = deps.upstreams.first()
  if (upstream.protocol !== 'anthropic')
    return { status: 200, body: { input_tokens: estimateInputTokens(request) }, headers: ESTIMATED }
  const abort = new CallAbort()
  const onClose = () => x.res.writableFinished || abort.cancel()
  x.res.on('close', onClose)
  try {
    const call = { model: upstream.models[alias], bodies: { anthropic: request } }
    const opts = { dispatcher: deps.dispatcher, timeoutMs: deps.timeoutMs, abort, log: deps.log, span: x.span }
    const r = await callUpstream(counter(upstream), call, { ...opts, backoff: deps.backoff })
    return { status: 200, body: r.body }
  } catch (e) {
    throw e instanceof UpstreamFailure ? e.api : e
  } finally {
    x.res.off('close', onClose)
  }
}

// The Anthropic adapter pointed at its count_tokens endpoint, whose answer is `{ input_tokens }`.
function counter(adapter: Adapter): Adapter {
  const { path, headers } = adapter.endpoint
  return {
    ...adapter,
    endpoint: { path: `${path}/count_tokens`, headers },
    parse(body) {
      const count = (body as { input_tokens?: unknown } | undefined)?.input_tokens
      if (typeof count !== 'number') throw new Error('no input_tokens')
      const usage = {
        input_tokens: count,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      }
      return { model: '', content: '', stop_reason: null, usage }
    },
  }
}
