import { toJsonSchema } from '@valibot/to-json-schema'
import type * as v from 'valibot'
import { BASE, route, type Route } from '../http/app.js'
import { statusOf, type ErrorCode } from '../http/errors.js'

type Json = Record<string, unknown>

const messages: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing or invalid API key',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Request body too large',
  415: 'Unsupported media type',
  422: 'Invalid input',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'Bad upstream answer',
  503: 'Service unavailable',
  504: 'Upstream timeout',
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
const requestId = { description: 'Identifier of this request in the server logs.', schema: { type: 'string' } }

const schemaOf = (s: v.GenericSchema): Json => {
  const { $schema: _, ...rest } = toJsonSchema(s, { target: 'draft-2020-12', errorMode: 'ignore' }) as Json
  return rest
}

function errorSchema(codes: ErrorCode[]): Json {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code'],
        properties: {
          code: { type: 'string', enum: codes },
          message: { type: 'string' },
          details: {
            type: 'object',
            description: 'Free-form. For invalid_request: `issues`, a list of `{path, message}`.',
            additionalProperties: true,
          },
        },
      },
    },
  }
}

export function buildOpenApi(routes: Route[]): Json {
  const components: Record<string, Json> = {}
  const ref = (s: v.GenericSchema): Json => {
    const title = (s as { pipe?: { type: string; title?: string }[] }).pipe?.find((p) => p.type === 'title')?.title
    const schema = schemaOf(s)
    if (!title) return schema
    components[title] = schema
    return { $ref: `#/components/schemas/${title}` }
  }
  const paths: Record<string, Record<string, Json>> = {}
  for (const r of routes) {
    if (!r.path.startsWith(BASE)) continue
    const responses: Record<string, Json> = {}
    for (const [status, doc] of Object.entries(r.responses ?? {})) {
      responses[status] = {
        description: doc.description,
        headers: { 'x-request-id': requestId, ...rateHeaders, ...doc.headers },
        ...(doc.schema ? { content: { 'application/json': { schema: ref(doc.schema) } } } : {}),
      }
    }
    const byStatus = new Map<number, ErrorCode[]>()
    for (const code of r.errors ?? []) byStatus.set(statusOf[code], [...(byStatus.get(statusOf[code]) ?? []), code])
    for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      const headers: Json = { 'x-request-id': requestId }
      if (status === 429 || status === 503) headers['Retry-After'] = retryAfter
      if (status !== 401) Object.assign(headers, rateHeaders)
      responses[status] = {
        description: `${messages[status] ?? 'Error'}: ${codes.join(', ')}`,
        headers,
        content: { 'application/json': { schema: errorSchema(codes) } },
      }
    }
    const op: Json = {
      operationId: r.operationId,
      summary: r.summary,
      security: [{ bearerAuth: [] }],
      responses,
    }
    if (r.headers) {
      op.parameters = Object.entries(r.headers).map(([name, s]) => {
        const { description, ...schema } = schemaOf(s)
        return { name, in: 'header', required: false, description, schema }
      })
    }
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: ref(r.body) } } }
    ;(paths[r.path.slice(BASE.length)] ??= {})[r.method.toLowerCase()] = op
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Studio Public REST API',
      version: '1.0.0',
      description: 'Identity and plan of the caller, language-model completions, and sales leads.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: BASE }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key `studio_<prefix>_<secret>`, sent as `Authorization: Bearer <key>`.',
        },
      },
    },
  }
}

export function openApiRoute(routes: Route[]): Route {
  let body: string | undefined
  const self: Route = route({
    method: 'GET',
    path: `${BASE}/openapi.json`,
    auth: true,
    summary: 'This document',
    operationId: 'getOpenApi',
    responses: { 200: { description: 'The OpenAPI 3.1 description of this API' } },
    errors: ['unauthorized', 'rate_limited'],
    handle() {
      body ??= JSON.stringify(buildOpenApi([...routes, self]))
      return { status: 200, json: body }
    },
  })
  return self
}
