import type { PageHandler } from '../http/server.js'
import type { Logger } from '../ops/log.js'
import { html } from './html.js'
import { bare } from './layout.js'
import { sendHtml } from './respond.js'

// The paths the dashboard answers (http/server.ts hands it every request to one of them).
export const ownsDashboardPath = (path: string) =>
  path === '/' || path === '/dashboard' || path.startsWith('/dashboard/')

export interface Pages extends PageHandler {
  close(): void
}

// The dashboard's code (its pages, stylesheet and script) is a chunk of its own, loaded by the first request for a
// page rather than by every start: a start does not compile it, and a process that serves no page never loads it.
// A failed load answers that request with an error page and is tried again by the next; a load that lands after
// `close` is closed then.
export function lazyDashboard(load: () => Promise<Pages>, log: Logger): Pages {
  let loading: Promise<Pages> | undefined
  return {
    owns: ownsDashboardPath,
    async handle(req, res, id, headers) {
      const attempt = (loading ??= load())
      let pages: Pages
      try {
        pages = await attempt
      } catch (e) {
        if (loading === attempt) loading = undefined
        log.error('the dashboard did not load', { id }, e)
        const page = html`<div class="card"><h1>Unavailable</h1><p>The dashboard did not load; try again.</p></div>`
        return sendHtml(res, 503, bare('Unavailable', page), headers)
      }
      return pages.handle(req, res, id, headers)
    },
    close() {
      void loading?.then(
        (pages) => pages.close(),
        () => {}
      )
    },
  }
}
