import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from '../ops/log.js'
import { html } from './html.js'
import { bare } from './layout.js'
import { sendHtml } from './respond.js'

// The paths the dashboard answers (http/server.ts hands it every request to one of them).
export const ownsDashboardPath = (path: string) =>
  path === '/' || path === '/dashboard' || path.startsWith('/dashboard/')

export interface Pages {
  owns(path: string): boolean
  handle(req: IncomingMessage, res: ServerResponse, id: string, headers: string[]): Promise<void>
  close(): void
}

// The dashboard's code (its pages, stylesheet and script) is a chunk of its own, loaded by the first request for a
// page rather than by every start: a start does not compile it, and a process that serves no page never loads it.
// A failed load answers that request with an error page and is tried again by the next.
export function lazyDashboard(load: () => Promise<Pages>, log: Logger): Pages {
  let loading: Promise<Pages> | undefined
  let loaded: Pages | undefined
  let closed = false
  return {
    owns: ownsDashboardPath,
    async handle(req, res, id, headers) {
      const attempt = (loading ??= load())
      try {
        loaded ??= await attempt
      } catch (e) {
        if (loading === attempt) loading = undefined
        log.error('the dashboard did not load', { id }, e)
        const page = html`<div class="card"><h1>Unavailable</h1><p>The dashboard did not load; try again.</p></div>`
        return sendHtml(res, 503, bare('Unavailable', page), headers)
      }
      if (closed) loaded.close()
      return loaded.handle(req, res, id, headers)
    },
    close() {
      closed = true
      loaded?.close()
    },
  }
}
