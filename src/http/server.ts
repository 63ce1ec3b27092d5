import { randomBytes } from 'node:crypto'
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { LABEL } from '../accounts/key-format.js'
import type { KeyStore, Principal } from '../accounts/auth.js'
import type { RateLimiter } from '../limits/limits.js'
import type { Config } from '../ops/config.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import { isDatabaseDown } from '../storage/database-down.js'
import { createAuthenticator } from './authenticate.js'
import { forwardedAddress } from './client-address.js'
import { type AddressLimiter, type BrowserOrigins, corsHeaders, preflight } from './cors.js'
import { ApiError, type ErrorCode, protocolHeaders } from './errors.js'
import {
  authorizationOf,
  errorBody,
  hasBody,
  paramsOf,
  queryOf,
  readJson,
  sendEmpty,
  sendJson,
  validate,
} from './io.js'
import { requestObserver } from './observe.js'
import type { Tracer } from '../ops/trace.js'
import { requestSpans } from './spans.js'
import type { Exchange, Route } from './route.js'
import { Router } from './router.js'

export interface HttpServerDeps {
  config: Config
  keys: KeyStore
  log: Logger
  routes: Route[]
  limiter: RateLimiter
  authFailures: RateLimiter
  metrics?: Metrics
  // Pages outside the API (the dashboard): the paths it owns are handed to it whole, after the request id is chosen.
  pages?: PageHandler
  tracer?: Tracer
  // The origins of browser-safe lead keys, for the CORS preflight of the routes that allow it (cors.ts), and their
  // requests per key and client address.
  origins?: BrowserOrigins
  leadAddresses?: AddressLimiter
}

interface Routed {
  route: Route
  key: boolean
}

// What serves the paths it owns outside the API's routes (the dashboard).
export interface PageHandler {
  owns(path: string): boolean
  handle(req: IncomingMessage, res: ServerResponse, id: string, headers: string[]): Promise<void>
}

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
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `cache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`
  )
  setTimeout(() => socket.destroy(), 1000).unref()
}

// The responses of each connection not yet closed, in the order their requests came (a client may pipeline them):
// Node writes them one after the other, so the first is the one being written.
function responsesBySocket() {
  const bySocket = new WeakMap<Duplex, ServerResponse[]>()
  return {
    add(req: IncomingMessage, res: ServerResponse) {
      const socket = req.socket
      let open = bySocket.get(socket)
      if (!open) bySocket.set(socket, (open = []))
      open.push(res)
      res.once('close', () => {
        const at = open.indexOf(res)
        if (at !== -1) open.splice(at, 1)
      })
    },
    writing: (socket: Duplex) => bySocket.get(socket)?.[0],
  }
}

type Responses = ReturnType<typeof responsesBySocket>

function answerParserErrors(server: Server, log: Logger, responses: Responses) {
  // What Node's HTTP parser refuses before `handle` sees a request (a malformed request line or header, headers over
  // maxHeaderSize, a client too slow to send its request) is answered with the Error body too, written raw, and the
  // connection ends, unless a response has started on it. Never logged with the raw bytes: they may hold a key.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    log.debug('client error', { code: err.code })
    if (err.code === 'ECONNRESET' || !socket.writable || responses.writing(socket)?.headersSent) {
      socket.destroy()
      return
    }
    const code = CLIENT_ERRORS[err.code ?? ''] ?? 'bad_request'
    endRaw(socket, new ApiError({ code, message: CLIENT_MESSAGES[code] ?? 'The request is not valid HTTP/1.1' }))
  })
  // Node would close a CONNECT (a proxy's method) without a word.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
    endRaw(socket, new ApiError({ code: 'bad_request', message: 'CONNECT is not supported' }))
  )
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>

const bootId = randomBytes(4).toString('hex')
let seq = 0
const REQUEST_ID = /^[\w.:-]{1,128}$/
// A caller's request id is logged: one that looks like a key (say, pasted into the wrong header) is replaced.
const KEY_LIKE = new RegExp(`(^${LABEL}_)|(${LABEL}_[0-9A-Za-z]{12}_)`)

// The caller's own x-request-id when it sends a sane one, else this process's next: boot id and a counter.
function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) && !KEY_LIKE.test(incoming)
    ? incoming
    : `${bootId}-${(++seq).toString(36)}`
}

// The one place an error becomes a response: an ApiError as it is, a database that cannot be reached as 503,
// anything else as a logged 500 that shows nothing of the error.
function toApiError(e: unknown, id: string, req: IncomingMessage, log: Logger): ApiError {
  if (e instanceof ApiError) return e
  if (isDatabaseDown(e)) {
    log.warn('database unavailable', { id, err: String((e as Error).message) })
    return new ApiError({
      code: 'service_unavailable',
      message: 'The database is not reachable; try again shortly',
      headers: {
        'retry-after': '2',
      },
    })
  }
  log.error('unhandled error', { id, method: req.method, path: req.url?.split('?')[0] }, e)
  return new ApiError({
    code: 'internal_error',
    message: 'Something went wrong on our side; the request id identifies it in our logs',
  })
}

function serverOptions(config: Config) {
  const requestTimeout = config.STUDIO_REQUEST_TIMEOUT_MS
  const headersTimeout = Math.min(config.STUDIO_HEADERS_TIMEOUT_MS, requestTimeout)
  return {
    requestTimeout,
    headersTimeout,
    // Node looks for expired requests every 30 s by default: a slow client would hold on for up to 30 s more.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeout / 4)),
    keepAliveTimeout: 5_000,
    maxHeaderSize: 16 * 1024,
    // Node answers a missing Host with a bare 400; `handle` does, with the Error body.
    requireHostHeader: false,
  }
}

// The API's HTTP server: each request goes through one pipeline (request id, route match, key and rate limit, body,
// handler, and any error turned into the Error body), composed here from its parts.
export function createHttpServer(deps: HttpServerDeps) {
  const { config, log } = deps
  // Whether a route takes a key is read from its declaration once, here, not on each request.
  const router = new Router<Routed>()
  for (const r of deps.routes) router.add(r.method, r.path, { route: r, key: r.uses.includes('key') })
  const corsPaths = new Set(deps.routes.filter((r) => r.cors).map((r) => r.path))
  const observe = requestObserver(log, deps.metrics)
  const trace = requestSpans(deps.tracer)
  const authenticate = createAuthenticator(deps)
  const resolveAddress = config.STUDIO_TRUSTED_PROXIES && forwardedAddress(config.STUDIO_TRUSTED_PROXIES)
  const responses = responsesBySocket()

  // The route for the request and its path parameters; null when the request is answered already (OPTIONS).
  function routeOf(req: IncomingMessage, path: string, res: ServerResponse, headers: string[]) {
    if (req.headers.host === undefined && req.httpVersionMinor === 1)
      throw new ApiError({ code: 'bad_request', message: 'An HTTP/1.1 request needs a Host header' })
    const match = router.find(req.method ?? 'GET', path)
    if (!match)
      throw new ApiError({
        code: 'not_found',
        message: `No route for ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`,
      })
    if (!('allow' in match)) return match
    const allow = match.allow.join(', ')
    if (req.method === 'OPTIONS') {
      if (corsPaths.has(path)) preflight(req, res, headers.concat('allow', allow), deps.origins)
      else res.writeHead(204, headers.concat('allow', allow)).end()
      return null
    }
    throw new ApiError({
      code: 'method_not_allowed',
      message: `${req.method} is not allowed here; use ${allow}`,
      details: { allow: match.allow },
      headers: { allow },
    })
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now()
    responses.add(req, res)
    if (!server.listening) res.shouldKeepAlive = false
    resolveAddress?.(req)
    const id = requestIdOf(req)
    const headers = ['x-request-id', id, 'cache-control', 'no-store', 'x-content-type-options', 'nosniff']
    // Every field from the start, so that all exchanges share one shape.
    const none = undefined as unknown as Principal
    const exchange: Exchange = {
      req,
      res,
      id,
      started,
      headers,
      route: undefined,
      principal: none,
      body: undefined,
      params: NO_PARAMS,
      query: NO_PARAMS,
      span: undefined,
    }
    observe?.(exchange)
    trace?.(exchange)
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    if (deps.pages?.owns(path)) {
      exchange.route = '/dashboard'
      return deps.pages.handle(req, res, id, headers)
    }
    let r: Route | undefined
    try {
      const match = routeOf(req, path, res, headers)
      if (!match) return
      const { route: routed, params } = match
      r = routed.route
      exchange.route = r.path
      exchange.params = r.params ? paramsOf(r.params, params) : params
      if (r.cors) corsHeaders(req, headers, deps.origins)
      if (routed.key) {
        const principal = authenticate(req, headers, r)
        exchange.principal = principal instanceof Promise ? await principal : principal
      }
      if (r.query) exchange.query = queryOf(r.query, q === -1 ? '' : url.slice(q))
      if (r.body) {
        const json = await readJson(req, config.STUDIO_BODY_LIMIT)
        exchange.body = validate(r.body, json)
      } else if (!r.ownBody && hasBody(req))
        throw new ApiError({ code: 'bad_request', message: 'This endpoint takes no request body' })
      const pending = r.handle(exchange)
      const reply = pending instanceof Promise ? await pending : pending
      if (res.headersSent) return
      if (reply.status === 204) sendEmpty(res, headers)
      else sendJson(res, reply.status, reply.json ?? JSON.stringify(reply.body), headers, reply.headers)
    } catch (e) {
      if (res.headersSent) {
        res.destroy()
        return
      }
      const error = toApiError(e, id, req, log)
      const authorization = authorizationOf(req)
      const twice = authorization === undefined && req.headers.authorization !== undefined
      const required = protocolHeaders(error, authorization, twice)
      if (!r?.errors) return sendJson(res, error.status, errorBody(error), headers, required)
      const own = r.errors.reply(error)
      sendJson(res, own.status, own.body, headers, { ...required, ...own.headers })
    }
  }

  const server: Server = createServer(serverOptions(config), (req, res) => void handle(req, res))
  // An Expect other than 100-continue: Node would answer a bare 417; RFC 9110 lets a server ignore it, and this one
  // does.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => void handle(req, res))
  answerParserErrors(server, log, responses)
  return { server, handle }
}
