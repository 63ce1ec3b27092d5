import { ApiError } from '../http/errors.js'
import { route, type Route } from '../http/route.js'
import type { Database } from '../storage/db.js'

// GET /healthz: the process is up.
export const healthzRoute = (): Route =>
  route({
    method: 'GET',
    path: '/healthz',
    uses: [],
    summary: 'The process is up',
    handle: () => ({ status: 200, body: { status: 'ok' } }),
  })

// GET /readyz: the database answers. `details` are shown without deciding readiness (e.g. where the rate limits
// live now).
export function readyzRoute(db: Database, details: () => Record<string, unknown> = () => ({})): Route {
  return route({
    method: 'GET',
    path: '/readyz',
    uses: ['database'],
    summary: 'The database answers',
    async handle() {
      if (await db.ready()) return { status: 200, body: { status: 'ready', details: details() } }
      throw new ApiError({
        code: 'service_unavailable',
        message: 'The database is not reachable',
        headers: { 'retry-after': '2' },
      })
    },
  })
}
