import type { IncomingMessage, ServerResponse } from 'node:http'
import * as v from 'valibot'
import { ApiError, invalid, type Issue } from './errors.js'

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i

// The Authorization header, or undefined when it is missing or sent more than once (Node would keep the first and
// drop the others silently): two credentials are not one valid one, so they get the same 401.
export function authorizationOf(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders
  let found: string | undefined
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') {
      if (found !== undefined) return undefined
      found = raw[i + 1]
    }
  }
  return found
}

export function hasBody(req: IncomingMessage) {
  const len = req.headers['content-length']
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined
}

// Reads at most `limit` bytes; a larger body is refused from its Content-Length before any of it is read, or as
// soon as the running count passes the limit (the rest is discarded as it arrives, never buffered). The text must be
// UTF-8 and JSON, nest at most MAX_DEPTH deep and repeat no key within an object.
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = req.headers['content-type']
  if (!type || !JSON_TYPE.test(type)) {
    throw new ApiError({
      code: 'unsupported_media_type',
      message: 'Content-Type must be application/json',
      details: {
        received: clip(type ?? null),
      },
    })
  }
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw tooLarge(limit)
  const bytes = await readBody(req, limit)
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    throw new ApiError({ code: 'invalid_json', message: 'Request body is not valid UTF-8' })
  }
  if (text.trim() === '')
    throw new ApiError({ code: 'invalid_json', message: 'Request body is empty; send a JSON object' })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new ApiError({
      code: 'invalid_json',
      message: clip(`Request body is not valid JSON: ${(e as Error).message}`),
    })
  }
  checkShape(text)
  return value
}

// A form body (application/x-www-form-urlencoded) of at most `limit` bytes, refused as readJson refuses a larger one.
export async function readForm(req: IncomingMessage, limit: number): Promise<URLSearchParams> {
  if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge(limit)
  return new URLSearchParams((await readBody(req, limit)).toString('utf8'))
}

// A form body, urlencoded or multipart, of at most `limit` bytes; another type is refused (415), a malformed one 400.
// Urlencoded, as most forms are, is parsed by URLSearchParams: the same parser the Fetch API's Response.formData()
// runs, without its streams and wrappers, which showed in the form endpoint's profile (BENCHMARKS.md).
export async function readFormData(req: IncomingMessage, limit: number): Promise<FormData | URLSearchParams> {
  const type = req.headers['content-type'] ?? ''
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)\s*(;|$)/i.test(type))
    throw new ApiError({
      code: 'unsupported_media_type',
      message: 'A form is sent as application/x-www-form-urlencoded or multipart/form-data',
      details: { received: clip(type || null) },
    })
  if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge(limit)
  const bytes = await readBody(req, limit)
  if (/^application\/x-www-form-urlencoded/i.test(type)) return new URLSearchParams(bytes.toString('utf8'))
  try {
    return await new Response(bytes, { headers: { 'content-type': type } }).formData()
  } catch {
    throw new ApiError({ code: 'bad_request', message: 'The form body is malformed' })
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const done = (e?: ApiError) => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone)
      if (e) reject(e)
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) done(tooLarge(limit))
      else chunks.push(chunk)
    }
    const onEnd = () => done()
    const onGone = () =>
      done(new ApiError({ code: 'bad_request', message: 'The request body ended before it was complete' }))
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone)
  })
}

const MAX_DEPTH = 64
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

// Over text that JSON.parse accepted: every string token skipped whole (so brackets and colons inside strings are
// not seen), an object key being a string followed by a colon. V8 parses any depth, but later code (JSON.stringify,
// validators) recurses; and JSON.parse keeps the last of two equal keys, silently: both are refused here. A scan of
// character codes, so that no match object is made per token.
function checkShape(text: string) {
  const keys: (Set<string> | null)[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const start = i
      let escaped = false
      for (i++; text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) {
          escaped = true
          i++
        }
      }
      let next = i + 1
      while (isSpace(text.charCodeAt(next))) next++
      if (text.charCodeAt(next) !== COLON) continue
      const key: string = escaped ? JSON.parse(text.slice(start, i + 1)) : text.slice(start + 1, i)
      const seen = (keys[keys.length - 1] ??= new Set())
      if (seen.has(key))
        throw new ApiError({
          code: 'invalid_json',
          message: clip(`Request body repeats the key ${JSON.stringify(key)} in one object`),
          details: {
            key: clip(key),
          },
        })
      seen.add(key)
    } else if (c === 0x7b || c === 0x5b) {
      if (keys.push(null) > MAX_DEPTH)
        throw new ApiError({ code: 'invalid_json', message: `Request body nests deeper than ${MAX_DEPTH} levels` })
    } else if (c === 0x7d || c === 0x5d) keys.pop()
  }
}

// Error messages and details quote the caller's input at most this long.
const clip = <T extends string | null>(s: T, max = 200): T =>
  (s !== null && s.length > max ? `${s.slice(0, max)}…` : s) as T

const tooLarge = (limit: number) =>
  new ApiError({
    code: 'payload_too_large',
    message: `Request body is larger than ${limit} bytes`,
    details: { limit },
    headers: { connection: 'close' },
  })

function issuesOf(issues: v.BaseIssue<unknown>[]): Issue[] {
  return issues.map((i) => {
    const path = clip(v.getDotPath(i))
    if (i.type === 'strict_object' && path && i.expected === 'never') return { path, message: 'is not a known field' }
    if (i.type === 'strict_object' && path && i.input === undefined) return { path, message: 'is required' }
    return { path: path ?? '', message: clip(i.message) }
  })
}

export function validate<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    const got = input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input
    throw invalid([{ path: '', message: `must be a JSON object, got ${got}` }])
  }
  const result = v.safeParse(schema, input)
  if (!result.success) throw invalid(issuesOf(result.issues))
  return result.output
}

// A request header validated by `schema`, or undefined when absent; sent twice, or refused by the schema → 422.
export function headerOf<S extends v.GenericSchema<string>>(
  req: IncomingMessage,
  name: string,
  schema: S
): v.InferOutput<S> | undefined {
  const lower = name.toLowerCase()
  if (req.headers[lower] === undefined) return undefined
  const values = req.headersDistinct[lower]!
  if (values.length > 1) throw invalid([{ path: name, message: 'must be sent once' }])
  const result = v.safeParse(schema, values[0])
  if (!result.success) throw invalid([{ path: name, message: clip(result.issues[0].message) }])
  return result.output
}

// The query parameters of `search` (`?a=1&b=2`, or '') through the route's schemas: a name it does not declare, one
// sent twice or a value its schema refuses is the caller's invalid request.
export function queryOf(schemas: Record<string, v.GenericSchema<string, unknown>>, search: string) {
  const query: Record<string, unknown> = {}
  const seen = new Set<string>()
  for (const [name, value] of new URLSearchParams(search)) {
    const schema = Object.hasOwn(schemas, name) ? schemas[name] : undefined
    if (!schema) throw invalid([{ path: clip(name), message: 'is not a parameter of this operation' }])
    if (seen.has(name)) throw invalid([{ path: name, message: 'must be sent once' }])
    seen.add(name)
    const result = v.safeParse(schema, value)
    if (!result.success) throw invalid([{ path: name, message: clip(result.issues[0].message) }])
    query[name] = result.output
  }
  return query
}

// The path parameters the router matched, each through the route's schema for it when it has one: a value the
// schema refuses names nothing → 404.
export function paramsOf(schemas: Record<string, v.GenericSchema<string>>, params: Record<string, string>) {
  const checked = { ...params }
  for (const name in params) {
    if (!schemas[name]) continue
    const result = v.safeParse(schemas[name], params[name])
    if (!result.success)
      throw new ApiError({ code: 'not_found', message: `There is no ${name} "${clip(params[name])}"` })
    checked[name] = result.output
  }
  return checked
}

export type Headers = Record<string, string | number | string[]>

// One writeHead with every header in a flat list: no per-header setHeader calls on the hot path. The list is a new
// array (`common` stays the caller's, untouched); pushing onto `common` would grow its backing store all the same.
export function sendJson(res: ServerResponse, status: number, body: string, common: string[], headers?: Headers) {
  const all = [...common, 'content-type', 'application/json', 'content-length', String(Buffer.byteLength(body))]
  if (headers) for (const k in headers) all.push(k, String(headers[k]))
  res.writeHead(status, all)
  res.end(body)
}

// 204: the headers alone.
export function sendEmpty(res: ServerResponse, common: string[]) {
  res.writeHead(204, common)
  res.end()
}

export const errorBody = (e: ApiError) =>
  JSON.stringify({
    error: e.details ? { code: e.code, message: e.message, details: e.details } : { code: e.code, message: e.message },
  })
