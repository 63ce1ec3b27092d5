import * as v from 'valibot'
import { ApiError } from '../http/errors.js'

// A request body checked against a protocol's schema: the value, or a 400 naming each bad member, which the route
// answers in the caller's protocol (both SDKs raise their BadRequestError on it).
export function parseRequest<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, body)
  if (result.success) return result.output
  const issues = result.issues.map((i) => ({ path: v.getDotPath(i) ?? '(body)', message: i.message }))
  const message =
    issues.length === 1 ? `${issues[0].path}: ${issues[0].message}` : `${issues.length} members are invalid`
  throw new ApiError({ code: 'bad_request', message, details: { issues } })
}
