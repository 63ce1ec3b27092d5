import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/metrics.js'
import type { Exchange } from './route.js'

// The access log: one JSON line per request on stdout, at level info. It names the route pattern, never the raw
// URL, and the key by its prefix only: no key, header, body, prompt, completion or lead content reaches it.
interface AccessLine {
  id: string
  method: string
  route: string | null
  status: number | null
  ms: number
  key_prefix: string | null
  account_id: string | null
  aborted?: true
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
      const line: AccessLine = {
        id: x.id,
        method: x.req.method ?? '',
        route: x.route ?? null,
        status: finished || res.headersSent ? res.statusCode : null,
        ms: Math.round(seconds * 1e6) / 1e3,
        key_prefix: x.principal?.prefix ?? null,
        account_id: x.principal?.accountId ?? null,
      }
      if (!finished) line.aborted = true
      log.info('request', line as unknown as Record<string, unknown>)
    })
  }
}
