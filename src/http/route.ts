import type { IncomingMessage, ServerResponse } from 'node:http'
import type * as v from 'valibot'
import type { Principal } from '../accounts/auth.js'
import type { Scope } from '../accounts/scopes.js'
import type { Span } from '../ops/trace.js'
import type { ApiError, ErrorCode } from './errors.js'
import type { Headers } from './io.js'
import type { Use } from './uses.js'

export const BASE = '/api/v1'

// One request and its response as they travel the pipeline: what a handler reads, and what the access log and the
// request metrics read once the response closes. The pipeline fills `route` and `params` when a route matched,
// `principal` once the key is verified and `body` once it is validated.
export interface Exchange<B = unknown> {
  headers: string[]
  req: IncomingMessage
  res: ServerResponse
  id: string
  principal: Principal
  body: B
  // The route's path parameters (`/things/:id` → `{ id }`), percent-decoded.
  params: Record<string, string>
  // The route's query parameters, each through its schema (absent ones left out).
  query: Record<string, unknown>
  started: number
  // The matched route's pattern, for the access log and metrics.
  route?: string
  // The request's span, when tracing is on (spans.ts).
  span?: Span
}

export interface Reply {
  status: number
  body?: unknown
  json?: string
  headers?: Headers
}

interface ErrorReply {
  status: number
  body: string
  headers?: Record<string, string>
}

// A protocol's own error body: how an error is answered, and the JSON schema of the body for the codes a route
// answers (its OpenAPI document's).
export interface ErrorFormat {
  // The status an error code is answered with (the protocol may use its own, as Anthropic's 529).
  status(code: ErrorCode): number
  reply(e: ApiError): ErrorReply
  schema(codes: ErrorCode[]): Record<string, unknown>
  // Headers of its own some statuses are sent with, as documented.
  headers?: Record<number, HeaderDocs>
}

type HeaderDocs = Record<string, { description: string; schema: Record<string, unknown> }>

export interface ResponseDoc {
  description: string
  schema?: v.GenericSchema
  headers?: HeaderDocs
  // The server-sent events the response is made of instead, when the request asks for a stream (text/event-stream):
  // each event's name and the schema of its data; `error` events carry the Error body with one of `errors`.
  // `terminator`: the data of a last event that is not JSON (OpenAI's `[DONE]`).
  events?: { description: string; data: Record<string, v.GenericSchema>; errors: ErrorCode[]; terminator?: string }
}

// A route declares what it uses (`uses`, plus `body` and `headers` when it reads them); the error statuses it can
// answer, and so its OpenAPI responses, are derived from that declaration (uses.ts). `responses` are its successes.
export interface Route<S extends v.GenericSchema = v.GenericSchema> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  // `/api/v1/things/:id`: a `:name` segment is a path parameter, handed to the handler in `exchange.params`.
  path: string
  uses: Use[]
  // The scope a key needs for this route (with `key` in `uses`): checked before the rate limit counts the request,
  // documented in the operation's security requirement, and a key without it answered 403 `forbidden`.
  scope?: Scope
  // A web page's own script may call it (CORS, cors.ts), with a key that names the page's origin.
  cors?: boolean
  // The key may come in `x-api-key` as well as in Authorization (the Anthropic SDKs' header).
  apiKeyHeader?: boolean
  // The route's errors in its protocol's own body and status (the OpenAI- and Anthropic-compatible routes), in
  // place of the Error body.
  errors?: ErrorFormat
  body?: S
  // The handler reads the request body itself (the form endpoint's form bodies), in place of `body`.
  ownBody?: boolean
  // Schemas of its path parameters, by name (a `:name` without one is any string): a value its schema refuses names
  // nothing here, answered 404 `not_found` before the key step; documented as the path's parameters.
  params?: Record<string, v.GenericSchema<string>>
  // Its query parameters, by name, each sent at most once: a value its schema refuses, a name it does not declare or
  // a name sent twice is answered 422 `invalid_request` before the handler runs; documented as query parameters.
  query?: Record<string, v.GenericSchema<string, unknown>>
  // Request headers the route reads (documented as header parameters; the handler validates them with headerOf).
  headers?: Record<string, v.GenericSchema<string>>
  summary: string
  operationId?: string
  responses?: Record<number, ResponseDoc>
  handle(exchange: Exchange<v.InferOutput<S>>): Promise<Reply> | Reply
}

export const route = <S extends v.GenericSchema>(r: Route<S>) => r as unknown as Route
