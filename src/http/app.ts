import { randomBytes } from 'node:crypto'
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Principal, KeyStore } from '../accounts/auth.js'
import type { RateLimiter, Verdict } from '../limits/limits.js'
import type { Config } from '../ops/config.js'
import type { Database } from '../storage/db.js'
import { ApiError, type ErrorCode } from './errors.js'
import { authorizationOf, errorBody, hasBody, readJson, sendJson, validate } from './io.js'
import { LABEL } from '../accounts/keys.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/metrics.js'
import { requestObserver } from './observe.js'
import type { Exchange, Route } from './route.js'
import { Router } from './router.js'

export interface AppDeps {
  config: Config
  db: Database
  keys: KeyStore
  log: Logger
  routes: Route[]
  limiter: RateLimiter
  authFailures: RateLimiter
  metrics?: Metrics
  // Pages outside the API (the dashboard): the paths it owns are handed to it whole, after the request id is chosen.
  pages?: PageHandler
}

interface PageHandler {
  owns(path: string): boolean
  handle(req: IncomingMessage, res: ServerResponse, id: string, headers: string[]): Promise<void>
}

const DB_DOWN = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOENT',
  'EPIPE',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'QUERY_DEADLINE',
  '57P01',
  '57P02',
  '57P03',
  '57014',
  '53000',
  '53100',
  '53200',
  '53300',
  '53400',
  '25006',
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
])
export const isDatabaseDown = (e: unknown) => DB_DOWN.has((e as { code?: string })?.code ?? '')

const rateLimited = (message: string, v: Verdict) =>
  new ApiError('rate_limited', message, { limit: v.limit, retry_after: v.resetS }, { 'retry-after': String(v.resetS) })

const CLIENT_ERRORS: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'header_too_large',
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'payload_too_large',
}
const CLIENT_MESSAGES: Partial<Record<ErrorCode, string>> = {
  header_too_large: 'The request headers are larger than 16 KiB',
  request_timeout: 'The request was not received in time',
  payload_too_large: 'The chunk extensions are too large',
}

function endRaw(socket: Duplex, e: ApiError) {
  const body = errorBody(e)
  socket.end(
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `cache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`
  )
  setTimeout(() => socket.destroy(), 1000).unref()
}

const bootId = randomBytes(4).toString('hex')
let seq = 0
const REQUEST_ID = /^[\w.:-]{1,128}$/
// A caller's request id is logged: one that looks like a key (say, pasted into the wrong header) is replaced.
const KEY_LIKE = new RegExp(`(^${LABEL}_)|(${LABEL}_[0-9A-Za-z]{12}_)`)

export function createApp(deps: AppDeps) {
  const { config, log } = deps
  const router = new Router<Route>()
  for (const r of deps.routes) router.add(r.method, r.path, r)
  const observe = requestObserver(log, deps.metrics)

  const policy = `"default";q=${deps.limiter.limit};w=${deps.limiter.windowMs / 1000}`

  async function authenticate(req: IncomingMessage, headers: string[]): Promise<Principal> {
    const address = req.socket.remoteAddress ?? ''
    const checked = deps.authFailures.check(address)
    const blocked = checked instanceof Promise ? await checked : checked
    let principal: Principal
    if (!blocked.ok) {
      // The block stops guessing from this address; a key this process has already verified still works, so
      // clients sharing the address (behind a proxy, a NAT) are not locked out by one of them.
      const known = deps.keys.cached(authorizationOf(req))
      if (!known) {
        deps.metrics?.refused('rate_limited')
        throw rateLimited('Too many failed authentications from this address', blocked)
      }
      principal = known
    } else {
      try {
        const p = deps.keys.authenticate(authorizationOf(req))
        principal = p instanceof Promise ? await p : p
      } catch (e) {
        if (e instanceof ApiError && e.code === 'unauthorized') {
          const counted = deps.authFailures.hit(address)
          if (counted instanceof Promise) await counted
        }
        throw e
      }
    }
    const hit = deps.limiter.hit(principal.prefix)
    const v = hit instanceof Promise ? await hit : hit
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
      return new ApiError('service_unavailable', 'The database is not reachable; try again shortly', undefined, {
        'retry-after': '2',
      })
    }
    log.error('unhandled error', { id, method: req.method, path: req.url?.split('?')[0] }, e)
    return new ApiError('internal_error', 'Something went wrong on our side; the request id identifies it in our logs')
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now()
    if (!server.listening) res.shouldKeepAlive = false
    const incoming = req.headers['x-request-id']
    const id =
      typeof incoming === 'string' && REQUEST_ID.test(incoming) && !KEY_LIKE.test(incoming)
        ? incoming
        : `${bootId}-${(++seq).toString(36)}`
    const headers = ['x-request-id', id, 'cache-control', 'no-store', 'x-content-type-options', 'nosniff']
    const exchange = { req, res, id, started, headers } as Exchange
    observe?.(exchange)
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    if (deps.pages?.owns(path)) {
      exchange.route = '/dashboard'
      return deps.pages.handle(req, res, id, headers)
    }
    try {
      if (req.headers.host === undefined && req.httpVersionMinor === 1)
        throw new ApiError('bad_request', 'An HTTP/1.1 request needs a Host header')
      const match = router.find(req.method ?? 'GET', path)
      if (!match) throw new ApiError('not_found', `No route for ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`)
      if ('allow' in match) {
        const allow = match.allow.join(', ')
        if (req.method === 'OPTIONS') {
          res.writeHead(204, headers.concat('allow', allow)).end()
          return
        }
        throw new ApiError(
          'method_not_allowed',
          `${req.method} is not allowed here; use ${allow}`,
          { allow: match.allow },
          { allow }
        )
      }
      const r = match.route
      exchange.route = r.path
      if (r.uses.includes('key')) exchange.principal = await authenticate(req, headers)
      if (r.body) exchange.body = validate(r.body, await readJson(req, config.STUDIO_BODY_LIMIT))
      else if (hasBody(req)) throw new ApiError('bad_request', 'This endpoint takes no request body')
      const pending = r.handle(exchange)
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

  const requestTimeout = config.STUDIO_REQUEST_TIMEOUT_MS
  const headersTimeout = Math.min(config.STUDIO_HEADERS_TIMEOUT_MS, requestTimeout)
  const server: Server = createServer(
    {
      requestTimeout,
      headersTimeout,
      // Node looks for expired requests every 30 s by default: a slow client would hold on for up to 30 s more.
      connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeout / 4)),
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16 * 1024,
      // Node answers a missing Host with a bare 400; `handle` does, with the Error body.
      requireHostHeader: false,
    },
    (req, res) => void handle(req, res)
  )

  // An Expect other than 100-continue: Node would answer a bare 417; RFC 9110 lets a server ignore it, and this one does.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => void handle(req, res))

  // What Node's HTTP parser refuses before `handle` sees a request (a malformed request line or header, headers over
  // maxHeaderSize, a client too slow to send its request) is answered with the Error body too, written raw, and the
  // connection ends. Never logged with the raw bytes: they may hold a key.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    log.debug('client error', { code: err.code })
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy()
      return
    }
    const code = CLIENT_ERRORS[err.code ?? ''] ?? 'bad_request'
    endRaw(socket, new ApiError(code, CLIENT_MESSAGES[code] ?? 'The request is not valid HTTP/1.1'))
  })
  // Node would close a CONNECT (a proxy's method) without a word.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
    endRaw(socket, new ApiError('bad_request', 'CONNECT is not supported'))
  )

  return { server, handle }
}
