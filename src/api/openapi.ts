import { toJsonSchema } from '@valibot/to-json-schema'
import * as v from 'valibot'
import { SCOPES } from '../accounts/scopes.js'
import { type ErrorCode, statusOf } from '../http/errors.js'
import { BASE, type ErrorFormat, type ResponseDoc, type Route, route } from '../http/route.js'
import { ANY_ROUTE, answersOf } from '../http/uses.js'
import { webhooksDoc } from './openapi-webhooks.js'

export type Json = Record<string, unknown>

// The OpenAPI 3.1 document, built from the route declarations: each operation's successes are declared by its
// route, its error responses derived from what the route uses (http/uses.ts). The answers any route can give are
// shared components (`#/components/responses/NotFound`, …).

const messages: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope this operation needs',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  413: 'Request body larger than the body limit',
  415: 'Unsupported media type',
  422: 'Invalid input',
  429: 'Too many requests',
  431: 'Request headers too large',
  500: 'Internal error',
  502: 'Bad upstream answer',
  503: 'Service unavailable',
  504: 'Upstream timeout',
  529: 'Every upstream is overloaded or unavailable',
}

const retryAfter = { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } }
const rateHeaders = {
  RateLimit: {
    description: 'IETF draft rate-limit state: `"default";r=<remaining>;t=<seconds until a slot frees>`.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'IETF draft rate-limit policy: `"default";q=<limit>;w=60`.',
    schema: { type: 'string' },
  },
}
const unbuffered = {
  description: 'On a stream: `no`, so that a proxy (nginx) passes each event on as it comes.',
  schema: { type: 'string', enum: ['no'] },
}
const requestId = { description: 'Identifier of this request in the server logs.', schema: { type: 'string' } }

const OpenApiDocument = v.pipe(
  v.looseObject({ openapi: v.string(), info: v.looseObject({ title: v.string(), version: v.string() }) }),
  v.title('OpenApiDocument')
)

const schemaOf = (s: v.GenericSchema): Json => {
  const { $schema: _, ...rest } = toJsonSchema(s, { target: 'draft-2020-12', errorMode: 'ignore' }) as Json
  return rest
}

const count = { type: 'integer', minimum: 0 }

// The Error body every error response of the spec's own routes has (http/io.ts writes it), one schema that each
// refers to; which codes a response carries, its description says. `details` depends on the code: its known members
// are typed, so that generated clients read them without a cast.
const ERROR: Json = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(statusOf) },
        message: { type: 'string' },
        details: {
          type: 'object',
          description: 'Present for some codes, with the members that code gives; others may be added.',
          properties: {
            issues: {
              type: 'array',
              description: 'invalid_request: each invalid member of the body, by its dotted path.',
              items: {
                type: 'object',
                required: ['path', 'message'],
                properties: { path: { type: 'string' }, message: { type: 'string' } },
              },
            },
            required_scope: { type: 'string', enum: SCOPES, description: 'forbidden: the scope the key lacks.' },
            origin: { type: 'string', description: 'forbidden: the web origin (`Origin`) the key does not allow.' },
            allow: { type: 'array', items: { type: 'string' }, description: 'method_not_allowed: the methods.' },
            limit: { ...count, description: 'rate_limited, quota_exceeded, payload_too_large: the limit.' },
            used: { ...count, description: 'quota_exceeded, key_quota_exceeded: the month’s count.' },
            retry_after: { ...count, description: 'rate_limited: seconds until a request is taken again.' },
            resets_at: {
              type: 'string',
              format: 'date-time',
              description: 'quota_exceeded, budget_exceeded: when the month ends.',
            },
            which: {
              type: 'string',
              enum: ['account', 'key'],
              description: "budget_exceeded: the budget that refused the call, the account's or the key's.",
            },
            budget: {
              type: 'string',
              description: 'budget_exceeded: the monthly budget in USD (the one `which` names).',
            },
            spent: { type: 'string', description: 'budget_exceeded: spent this month in USD.' },
            reserved: { type: 'string', description: 'budget_exceeded: held by calls under way in USD.' },
          },
          additionalProperties: true,
        },
      },
    },
  },
}
const errorSchema = (format: ErrorFormat | undefined, codes: ErrorCode[]): Json =>
  format ? format.schema(codes) : { $ref: '#/components/schemas/Error' }

const challenge = {
  description:
    'The Bearer challenge (RFC 6750 §3): `Bearer realm="studio"`, with `error="invalid_token"` when a ' +
    'key was sent and refused, `error="invalid_request"` when it was sent twice.',
  required: true,
  schema: { type: 'string' },
}
const allowed = { description: 'The methods of this path.', required: true, schema: { type: 'string' } }

// Answered before the key step counts the request (http/server.ts, http/authenticate.ts): without RateLimit headers.
const BEFORE_THE_LIMIT = new Set<ErrorCode>([
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'header_too_large',
])

function errorResponse(status: number, codes: ErrorCode[], format?: ErrorFormat, counted = false): Json {
  const headers: Json = { 'x-request-id': requestId }
  if (status === 401) headers['WWW-Authenticate'] = challenge
  if (status === 405) headers.Allow = allowed
  if (status === 429 || status === 503 || status === 529) headers['Retry-After'] = retryAfter
  if (counted || codes.some((c) => !BEFORE_THE_LIMIT.has(c))) Object.assign(headers, rateHeaders)
  Object.assign(headers, format?.headers?.[status])
  return {
    description: `${messages[status] ?? 'Error'}: ${codes.join(', ')}`,
    headers,
    content: { 'application/json': { schema: errorSchema(format, codes) } },
  }
}

const byStatus = (codes: ErrorCode[], status = (code: ErrorCode): number => statusOf[code]) => {
  const grouped = new Map<number, ErrorCode[]>()
  for (const code of codes) grouped.set(status(code), [...(grouped.get(status(code)) ?? []), code])
  return [...grouped].sort((a, b) => a[0] - b[0])
}

// The answers any route can give, one shared response per status, named after its codes (`not_found`: NotFound).
const shared = new Map(
  byStatus(ANY_ROUTE).map(([status, codes]) => [
    status,
    { name: codes.map((c) => c.replace(/(^|_)(\w)/g, (_, __, ch: string) => ch.toUpperCase())).join('Or'), codes },
  ])
)
const sharedResponses = () => Object.fromEntries([...shared].map(([s, r]) => [r.name, errorResponse(s, r.codes)]))

// A route with its protocol's own error body (`format`) shares none of the common responses. `lookup`: the handler
// answers 404 for a path parameter that names nothing (`/leads/{id}`), after the key step counted the request, so
// that 404 may carry the RateLimit headers.
function errorResponses(codes: ErrorCode[], format?: ErrorFormat, lookup = false): Record<string, Json> {
  const out: Record<string, Json> = {}
  for (const [status, group] of byStatus(codes, format?.status)) {
    if (format || (lookup && status === 404)) {
      out[status] = errorResponse(status, group, format, lookup && status === 404)
      continue
    }
    const common = shared.get(status)
    const same = common && common.codes.length === group.length && group.every((c) => common.codes.includes(c))
    out[status] = same ? { $ref: `#/components/responses/${common.name}` } : errorResponse(status, group)
  }
  return out
}

export type Ref = (s: v.GenericSchema) => Json

// A stream of server-sent events: OpenAPI 3.1 has no schema for each event, so the media type's schema is any of the
// events' data (which tools and generators read), and `x-events` gives each event name's data schema (the contract
// check in the tests reads it).
function eventStream(events: NonNullable<ResponseDoc['events']>, ref: Ref, format?: ErrorFormat): Json {
  const data: Json = {}
  for (const [name, schema] of Object.entries(events.data)) data[name] = ref(schema)
  data.error ??= errorSchema(format, events.errors)
  // Copies, one each: a schema object met twice in the document is inlined by openapi-typescript, not referred to.
  const payloads = [...new Set(Object.values(data).map((s) => JSON.stringify(s)))].map((s) => JSON.parse(s))
  const schema = {
    description: `${events.description} Each event's \`data\` is one of these, by the event's name as \`x-events\` gives.`,
    anyOf: payloads,
  }
  const stream: Json = { schema, 'x-events': data }
  if (events.terminator !== undefined) stream['x-terminator'] = events.terminator
  return stream
}

function successResponse(doc: ResponseDoc, ref: Ref, format?: ErrorFormat): Json {
  const content: Json = {}
  if (doc.schema) content['application/json'] = { schema: ref(doc.schema) }
  if (doc.events) content['text/event-stream'] = eventStream(doc.events, ref, format)
  return {
    description: doc.description,
    headers: {
      'x-request-id': requestId,
      ...rateHeaders,
      ...doc.headers,
      ...(doc.events ? { 'X-Accel-Buffering': unbuffered } : {}),
    },
    ...(doc.schema || doc.events ? { content } : {}),
  }
}

function parameter(name: string, where: 'query' | 'header', s: v.GenericSchema): Json {
  const { description, ...schema } = schemaOf(s)
  return { name, in: where, required: false, description, schema }
}

function operation(r: Route, ref: Ref): Json {
  const responses: Record<string, Json> = {}
  for (const [status, doc] of Object.entries(r.responses ?? {})) responses[status] = successResponse(doc, ref, r.errors)
  const lookup = r.uses.includes('key') && r.path.includes('/:')
  Object.assign(responses, errorResponses(answersOf(r), r.errors, lookup))
  const op: Json = { operationId: r.operationId, summary: r.summary }
  // OpenAPI 3.1 lets a non-OAuth scheme's requirement name the roles it needs: here the key's scope.
  op.security = r.uses.includes('key') ? [{ bearerAuth: r.scope ? [r.scope] : [] }] : []
  op.responses = responses
  const parameters = [
    ...Object.entries(r.query ?? {}).map(([name, s]) => parameter(name, 'query', s)),
    ...Object.entries(r.headers ?? {}).map(([name, s]) => parameter(name, 'header', s)),
  ]
  if (parameters.length) op.parameters = parameters
  if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: ref(r.body) } } }
  return op
}

const PARAMETER = /:(\w+)/g

// A route's `/leads/:id` is OpenAPI's `/leads/{id}`.
const templated = (path: string) => path.replace(PARAMETER, '{$1}')

// Its `:name` segments, documented once for every operation of the path (OPTIONS included): each a string the
// router hands the handler percent-decoded, as the schema the path's first route gives it constrains it.
function pathParameters(path: string, schemas: Route['params'] = {}): { parameters?: Json[] } {
  const names = [...path.matchAll(PARAMETER)].map((m) => m[1])
  if (names.length === 0) return {}
  const parameter = (name: string) => {
    const { description, ...schema } = schemas[name] ? schemaOf(schemas[name]) : { type: 'string' }
    return { name, in: 'path', required: true, ...(description ? { description } : {}), schema }
  }
  return { parameters: names.map(parameter) }
}

// OPTIONS is answered by the pipeline for every path, without a key: 204 with the methods the path allows. Its
// operationId is the path's words (`/messages/count_tokens`: optionsMessagesCountTokens).
const options = (path: string): Json => ({
  operationId: `options${path.replace(/(?:^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase())}`,
  summary: 'The methods this path allows (no key needed)',
  security: [],
  responses: {
    204: {
      description: 'No content; `Allow` lists the methods',
      headers: { 'x-request-id': requestId, Allow: allowed },
    },
    ...errorResponses(ANY_ROUTE),
  },
})

// `webhooks`: each event type's envelope schema (outbox/catalogue.ts), documented as OpenAPI 3.1 webhooks.
export function buildOpenApi(routes: Route[], webhooks: Record<string, v.GenericSchema> = {}): Json {
  const schemas: Record<string, Json> = { Error: ERROR }
  const ref: Ref = (s) => {
    const title = (s as { pipe?: { type: string; title?: string }[] }).pipe?.find((p) => p.type === 'title')?.title
    const schema = schemaOf(s)
    if (!title) return schema
    schemas[title] = schema
    return { $ref: `#/components/schemas/${title}` }
  }
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    if (!r.path.startsWith(BASE)) continue
    const path = r.path.slice(BASE.length)
    const item = (paths[templated(path)] ??= { ...pathParameters(path, r.params), options: options(path) })
    item[r.method.toLowerCase()] = operation(r, ref)
  }
  return document(paths, webhooksDoc(webhooks, ref), schemas)
}

function document(paths: Json, webhooks: Json, schemas: Json): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Studio Public REST API',
      version: '1.0.0',
      description:
        'Identity and plan of the caller, language-model completions, and sales leads. Every GET operation also ' +
        'answers HEAD, with the same status and headers and no content. A request body is at most the ' +
        "server's body limit, 1 MiB (1,048,576 bytes) unless its operator set `STUDIO_BODY_LIMIT` (1 KiB to 64 MiB): a " +
        'larger one is answered 413 `payload_too_large`, its `details.limit` the limit in bytes. Strings count ' +
        'their length in Unicode code points, as JSON Schema does; none may hold NUL or a lone surrogate.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: BASE }],
    security: [{ bearerAuth: [] }],
    paths,
    webhooks,
    components: {
      schemas,
      responses: sharedResponses(),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key `studio_<prefix>_<secret>`, sent as `Authorization: Bearer <key>`. A key carries scopes ' +
            `(${SCOPES.map((s) => `\`${s}\``).join(', ')}; all of them unless it was made with fewer): each ` +
            "operation's security requirement names the one it needs, and a key without it is answered 403 " +
            '`forbidden`. Any key may read this document.',
        },
      },
    },
  }
}

export function openApiRoute(routes: Route[], webhooks: Record<string, v.GenericSchema> = {}): Route {
  let body: string | undefined
  const self: Route = route({
    method: 'GET',
    path: `${BASE}/openapi.json`,
    uses: ['key'],
    summary: 'This document',
    operationId: 'getOpenApi',
    responses: { 200: { description: 'The OpenAPI 3.1 description of this API', schema: OpenApiDocument } },
    handle() {
      body ??= JSON.stringify(buildOpenApi([...routes, self], webhooks))
      return { status: 200, json: body }
    },
  })
  return self
}
