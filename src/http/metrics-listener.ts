import { createServer, type Server } from 'node:http'
import { listen, urlOf } from '../ops/listen.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import { ApiError } from './errors.js'
import { errorBody, sendJson } from './io.js'

export interface MetricsServer {
  url: string
  close(): Promise<void>
}

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

// The /metrics listener, apart from the API so that it can stay on loopback (or a private interface).
export async function serveMetrics(metrics: Metrics, host: string, port: number, log: Logger): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]
    let error: ApiError | null = null
    if (path !== '/metrics') error = new ApiError({ code: 'not_found', message: 'Only /metrics is served here' })
    else if (req.method !== 'GET' && req.method !== 'HEAD')
      error = new ApiError({
        code: 'method_not_allowed',
        message: `${req.method} is not allowed here; use GET, HEAD`,
        details: { allow: ['GET', 'HEAD'] },
        headers: { allow: 'GET, HEAD' },
      })
    if (error) return sendJson(res, error.status, errorBody(error), ['cache-control', 'no-store'], error.headers)
    const body = metrics.render()
    res.writeHead(200, {
      'content-type': CONTENT_TYPE,
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    })
    res.end(req.method === 'HEAD' ? undefined : body)
  })
  server.keepAliveTimeout = 5_000
  await listen(server, { port, host })
  const url = urlOf(server, host)
  log.info('metrics listening', { url: `${url}/metrics` })
  return {
    url,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok())
        server.closeAllConnections()
      }),
  }
}
