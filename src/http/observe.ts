import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import type { Principal } from '../accounts/auth.js'
import type { Exchange } from './route.js'

// The access log: one JSON line per request on stdout, at level info. It names the route pattern, never the raw
// URL, and the key by its prefix only: no key, header, body, prompt, completion or lead content reaches it.
// Fields, in order: id, method, route (null when none matched), status (null when nothing was sent), ms, key_prefix,
// account_id (null before a key is verified), and aborted: true when the response did not finish.

const str = (s: string | null | undefined) => (s == null ? 'null' : JSON.stringify(s))
// The request id (server.ts's requestIdOf accepts only [\w.:-]), the method (a token Node's parser accepted), the key
// prefix (base62) and the account id (a uuid) never need escaping.
const plain = (s: string | null | undefined) => (s == null ? 'null' : `"${s}"`)
// What repeats from line to line is made once: the method and route part per route and method (the parser knows a
// fixed set of methods), the key part per principal (a principal is one object per cached key).
const routeParts = new Map<string | undefined, Map<string, string>>()
const keyParts = new WeakMap<Principal, string>()

function routePart(route: string | undefined, method: string) {
  let byMethod = routeParts.get(route)
  if (!byMethod) routeParts.set(route, (byMethod = new Map()))
  let part = byMethod.get(method)
  if (part === undefined) byMethod.set(method, (part = `"method":${plain(method)},"route":${str(route)},"status":`))
  return part
}

function keyPart(p: Principal | undefined) {
  if (!p) return '"key_prefix":null,"account_id":null'
  let part = keyParts.get(p)
  if (part === undefined) {
    part = `"key_prefix":${plain(p.prefix)},"account_id":${plain(p.accountId)}`
    keyParts.set(p, part)
  }
  return part
}

// The AccessLine as JSON, in its field order, without building the object: the line is written for every request.
function accessJson(x: Exchange, status: number | null, ms: number, aborted: boolean): string {
  const route = routePart(x.route, x.req.method ?? '')
  const line = `"id":${plain(x.id)},${route}${status},"ms":${ms},${keyPart(x.principal)}`
  return aborted ? `${line},"aborted":true` : line
}

// Returns what the HTTP server (server.ts) calls as each request starts, or null when neither the log nor metrics
// want requests.
export function requestObserver(log: Logger, metrics: Metrics | undefined): ((x: Exchange) => void) | null {
  const logging = log.enabled('info')
  if (!logging && !metrics) return null
  return (x) => {
    metrics?.inFlight(1)
    x.res.on('close', () => {
      const { res } = x
      const seconds = (performance.now() - x.started) / 1000
      const finished = res.writableFinished
      if (metrics) {
        metrics.inFlight(-1)
        metrics.request(x.route ?? 'unmatched', finished ? res.statusCode : 'aborted', seconds)
      }
      if (!logging) return
      const status = finished || res.headersSent ? res.statusCode : null
      log.infoJson('request', accessJson(x, status, Math.round(seconds * 1e6) / 1e3, !finished))
    })
  }
}
