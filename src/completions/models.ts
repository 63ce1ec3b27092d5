import * as v from 'valibot'
import { ModelList } from '../api/sdk-schemas.js'
import { BASE, type Exchange, route, type Route } from '../http/route.js'
import type { CompletionsDeps } from './completions.js'
import { openaiErrors } from './protocol-errors.js'
import { allowedAliases } from './aliases.js'

// GET /api/v1/models: the model aliases a key may name, in OpenAI's list shape, or Anthropic's when the request
// carries `anthropic-version` (as the Anthropic SDKs always do). The aliases have no creation date: the epoch. The key
// may come in `x-api-key`, the only header the Anthropic Python SDK sends.
export function modelsRoute(deps: CompletionsDeps): Route {
  return route({
    method: 'GET',
    path: `${BASE}/models`,
    uses: ['key'],
    scope: 'completions:write',
    apiKeyHeader: true,
    headers: {
      'anthropic-version': v.pipe(v.string(), v.description("Any value: the answer is in Anthropic's list shape.")),
    },
    errors: openaiErrors,
    summary: 'List the model aliases (OpenAI- or Anthropic-compatible)',
    operationId: 'listModels',
    responses: { 200: { description: "The aliases, in OpenAI's list shape or Anthropic's", schema: ModelList } },
    handle: (x) => ({ status: 200, body: listOf(allowedAliases(deps.upstreams.aliases(), x.principal), x) }),
  })
}

function listOf(aliases: string[], x: Exchange) {
  if (x.req.headers['anthropic-version'] === undefined)
    return { object: 'list', data: aliases.map((id) => ({ id, object: 'model', created: 0, owned_by: 'studio' })) }
  const data = aliases.map((id) => ({ type: 'model', id, display_name: id, created_at: '1970-01-01T00:00:00Z' }))
  return { data, has_more: false, first_id: aliases[0] ?? null, last_id: aliases.at(-1) ?? null }
}
