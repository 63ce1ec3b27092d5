import type { Tracer } from '../ops/trace.js'
import type { Exchange } from './route.js'

// Each request's span, when tracing is on (HTTP semantic conventions): started as the request arrives, the child of
// the caller's span when it sent a W3C traceparent; named `METHOD route` once a route matched; ended when the response
// closes, with its status (an error for a 5xx or a response that did not finish). The handlers find it in the
// exchange (`span`) to hang the spans of their own calls under it. Returns null when tracing is off.
export function requestSpans(tracer: Tracer | undefined): ((x: Exchange) => void) | null {
  if (!tracer?.on) return null
  return (x) => {
    const method = x.req.method ?? 'GET'
    const traceparent = x.req.headers.traceparent
    const span = tracer.request(method, typeof traceparent === 'string' ? traceparent : undefined)
    span.set('http.request.method', method)
    span.set('studio.request_id', x.id)
    x.span = span
    x.res.on('close', () => {
      const { res, route } = x
      if (route !== undefined) {
        span.rename(`${method} ${route}`)
        span.set('http.route', route)
      }
      if (res.headersSent) span.set('http.response.status_code', res.statusCode)
      if (!res.writableFinished) span.fail('aborted')
      else if (res.statusCode >= 500) span.fail(String(res.statusCode))
      span.end()
    })
  }
}
