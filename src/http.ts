import type { IncomingMessage, ServerResponse } from 'node:http'
import * as v from 'valibot'
import { ApiError, invalid, type Issue } from './errors.js'

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i

export function hasBody(req: IncomingMessage) {
  const len = req.headers['content-length']
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined
}

// Reads at most `limit` bytes; a larger body is refused from its Content-Length before any of it is read, or as
// soon as the running count passes the limit.
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = req.headers['content-type']
  if (!type || !JSON_TYPE.test(type)) {
    throw new ApiError('unsupported_media_type', 'Content-Type must be application/json', { received: type ?? null })
  }
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw tooLarge(limit)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  let text: string
  try {
    text = decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
  } catch {
    throw new ApiError('invalid_json', 'Request body is not valid UTF-8')
  }
  if (text.trim() === '') throw new ApiError('invalid_json', 'Request body is empty; send a JSON object')
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new ApiError('invalid_json', `Request body is not valid JSON: ${(e as Error).message}`)
  }
}

const tooLarge = (limit: number) =>
  new ApiError('payload_too_large', `Request body is larger than ${limit} bytes`, { limit }, { connection: 'close' })

export function issuesOf(issues: v.BaseIssue<unknown>[]): Issue[] {
  return issues.map((i) => {
    const path = v.getDotPath(i)
    if (i.type === 'strict_object' && path && i.expected === 'never') return { path, message: 'is not a known field' }
    if (i.type === 'strict_object' && path && i.input === undefined) return { path, message: 'is required' }
    return { path: path ?? '', message: i.message }
  })
}

export function validate<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalid([{ path: '', message: `must be a JSON object, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}` }])
  }
  const result = v.safeParse(schema, input)
  if (!result.success) throw invalid(issuesOf(result.issues))
  return result.output
}

export type Headers = Record<string, string | number | string[]>

// One writeHead with every header in a flat list: no per-header setHeader calls on the hot path.
export function sendJson(res: ServerResponse, status: number, body: string, common: string[], headers?: Headers) {
  const all = common.concat('content-type', 'application/json', 'content-length', String(Buffer.byteLength(body)))
  if (headers) for (const k in headers) all.push(k, String(headers[k]))
  res.writeHead(status, all)
  res.end(body)
}

export const errorBody = (e: ApiError) =>
  JSON.stringify({ error: e.details ? { code: e.code, message: e.message, details: e.details } : { code: e.code, message: e.message } })
