import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type * as v from 'valibot'
import type { Principal, KeyStore } from './auth.js'
import type { SlidingWindow, Verdict } from './limits.js'
import type { Config } from './config.js'
import type { Database } from './db.js'
import { ApiError, type ErrorCode } from './errors.js'
import { errorBody, hasBody, readJson, sendJson, validate, type Headers } from './http.js'
import { LABEL } from './keys.js'
import type { Logger } from './log.js'
import type { Metrics } from './metrics.js'
import { requestObserver } from './observe.js'
import { Router } from './router.js'

export const BASE = '/api/v1'

export interface Ctx<B = unknown> {
  headers: string[]
  req: IncomingMessage
  res: ServerResponse
  id: string
  principal: Principal
  body: B
  started: number
  // The matched route's pattern, for the access log and metrics.
  route?: string
}

export interface Reply {
  status: number
  body?: unknown
  json?: string
  headers?: Headers
}

export interface ResponseDoc {
  description: string
  schema?: v.GenericSchema
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>
}

export interface Route<S extends v.GenericSchema = v.GenericSchema> {
  method: 'GET' | 'POST'
  path: string
  auth: boolean
  body?: S
  summary: string
  operationId?: string
  responses?: Record<number, ResponseDoc>
  errors?: ErrorCode[]
  handle(ctx: Ctx<v.InferOutput<S>>): Promise<Reply> | Reply
}

export const route = <S extends v.GenericSchema>(r: Route<S>) => r as unknown as Route

export interface AppDeps {
  config: Config
  db: Database
  keys: KeyStore
  log: Logger
  routes: Route[]
  limiter: SlidingWindow
  authFailures: SlidingWindow
  metrics?: Metrics
}

const DB_DOWN = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED',
  'CONNECTION_ENDED', 'CONNECTION_DESTROYED', '57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004',
])
export const isDatabaseDown = (e: unknown) => DB_DOWN.has((e as { code?: string })?.code ?? '')

const rateLimited = (message: string, v: Verdict) =>
  new ApiError('rate_limited', message, { limit: v.limit, retry_after: v.resetS }, { 'retry-after': String(v.resetS) })

const bootId = randomBytes(4).toString('hex')
let seq = 0
const REQUEST_ID = /^[\w.:-]{1,128}$/
// A caller's request id is logged: one that looks like a key (say, pasted into the wrong header) is replaced.
const KEY_LIKE = new RegExp(`${LABEL}_[0-9A-Za-z]{12}_`)

export function createApp(deps: AppDeps) {
  const { config, log } = deps
  const router = new Router<Route>()
  for (const r of deps.routes) router.add(r.method, r.path, r)
  const observe = requestObserver(log, deps.metrics)

  const policy = `"default";q=${deps.limiter.limit};w=${deps.limiter.windowMs / 1000}`

  async function authenticate(req: IncomingMessage, headers: string[]): Promise<Principal> {
    const address = req.socket.remoteAddress ?? ''
    const blocked = deps.authFailures.check(address)
    if (!blocked.ok) {
      deps.metrics?.refused('rate_limited')
      throw rateLimited('Too many failed authentications from this address', blocked)
    }
    let principal: Principal
    try {
      const p = deps.keys.authenticate(req.headers.authorization)
      principal = p instanceof Promise ? await p : p
    } catch (e) {
      if (e instanceof ApiError && e.code === 'unauthorized') deps.authFailures.hit(address)
      throw e
    }
    const v = deps.limiter.hit(principal.prefix)
    headers.push('ratelimit-policy', policy, 'ratelimit', `"default";r=${v.remaining};t=${v.resetS}`)
    if (!v.ok) {
      deps.metrics?.refused('rate_limited')
      throw rateLimited(`More than ${v.limit} requests in 60 seconds with this key`, v)
    }
    return principal
  }

  function fail(res: ServerResponse, e: ApiError, headers: string[]) {
    sendJson(res, e.status, errorBody(e), headers, e.headers)
  }

  function toApiError(e: unknown, id: string, req: IncomingMessage): ApiError {
    if (e instanceof ApiError) return e
    if (isDatabaseDown(e)) {
      log.warn('database unavailable', { id, err: String((e as Error).message) })
      return new ApiError('service_unavailable', 'The database is not reachable; try again shortly', undefined, { 'retry-after': '2' })
    }
    log.error('unhandled error', { id, method: req.method, path: req.url }, e)
    return new ApiError('internal_error', 'Something went wrong on our side; the request id identifies it in our logs')
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now()
    const incoming = req.headers['x-request-id']
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) && !KEY_LIKE.test(incoming) ? incoming : `${bootId}-${(++seq).toString(36)}`
    const headers = ['x-request-id', id, 'cache-control', 'no-store', 'x-content-type-options', 'nosniff']
    const ctx = { req, res, id, started, headers } as Ctx
    observe?.(ctx)
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    try {
      const match = router.find(req.method ?? 'GET', path)
      if (!match) throw new ApiError('not_found', `No route for ${path.length > 200 ? path.slice(0, 200) + '…' : path}`)
      if ('allow' in match) {
        const allow = match.allow.join(', ')
        if (req.method === 'OPTIONS') {
          res.writeHead(204, headers.concat('allow', allow)).end()
          return
        }
        throw new ApiError('method_not_allowed', `${req.method} is not allowed here; use ${allow}`, { allow: match.allow }, { allow })
      }
      const r = match.route
      ctx.route = r.path
      if (r.auth) ctx.principal = await authenticate(req, headers)
      if (r.body) ctx.body = validate(r.body, await readJson(req, config.STUDIO_BODY_LIMIT))
      else if (hasBody(req)) throw new ApiError('bad_request', 'This endpoint takes no request body')
      const pending = r.handle(ctx)
      const reply = pending instanceof Promise ? await pending : pending
      if (res.headersSent) return
      sendJson(res, reply.status, reply.json ?? JSON.stringify(reply.body), headers, reply.headers)
    } catch (e) {
      if (res.headersSent) {
        res.destroy()
        return
      }
      fail(res, toApiError(e, id, req), headers)
    }
  }

  const server: Server = createServer(
    { requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000, maxHeaderSize: 16 * 1024 },
    (req, res) => void handle(req, res)
  )
  return { server, handle }
}
