import type { IncomingMessage, ServerResponse } from 'node:http'
import { findSession } from '../accounts/sessions.js'
import { ApiError } from '../http/errors.js'
import { readForm } from '../http/io.js'
import { Router } from '../http/router.js'
import type { Logger } from '../ops/log.js'
import { SlidingWindow } from '../limits/limits.js'
import { accountPages } from './account.js'
import { retentionPages } from './account-retention.js'
import { leadExportPages } from './lead-export.js'
import { auditPages } from './audit.js'
import { html, Html } from './html.js'
import { bare, canManage } from './layout.js'
import { keyFormPages } from './key-form-page.js'
import { keyLimitPages } from './key-limits.js'
import { keysPages } from './key-pages.js'
import { ownsDashboardPath } from './lazy.js'
import { leadErasePages } from './lead-erase.js'
import { leadsPages } from './leads.js'
import type { DashboardDeps, Outcome, Page, PageCtx } from './page.js'
import { redirect, SECURITY_HEADERS, sendHtml } from './respond.js'
import { SCRIPT } from './script.js'
import { cookieName, signinPages } from './signin.js'
import { STYLE } from './style.js'
import { teamPages } from './team.js'
import { usagePages } from './usage.js'
import { webhooksPages } from './webhook-pages.js'

const FORM_LIMIT = 64 * 1024
const ASSETS: Record<string, [string, string]> = {
  '/dashboard/assets/style.css': ['text/css; charset=utf-8', STYLE],
  '/dashboard/assets/app.js': ['text/javascript; charset=utf-8', SCRIPT],
  '/dashboard/assets/icon.svg': [
    'image/svg+xml',
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M8 1l7 7-7 7-7-7z" fill="#4f46e5"/></svg>',
  ],
}
const TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Not allowed',
  404: 'Not found',
  405: 'Method not allowed',
  429: 'Too many attempts',
  500: 'Something went wrong',
  503: 'Unavailable',
}

function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null
  }
  return null
}

type Attempts = Parameters<typeof signinPages>[1]

// Every page of the dashboard, section by section.
export const dashboardPages = (deps: DashboardDeps, attempts: Attempts): Page[] => [
  ...signinPages(deps, attempts),
  ...keysPages(deps),
  ...keyLimitPages(deps),
  ...keyFormPages(deps),
  ...leadsPages(deps),
  ...leadExportPages(deps),
  ...leadErasePages(deps),
  ...usagePages(deps),
  ...webhooksPages(deps),
  ...teamPages(deps),
  ...auditPages(deps),
  ...accountPages(deps),
  ...retentionPages(deps),
]

// The dashboard: server-rendered pages under /dashboard on the API's listener (http/server.ts hands it those paths).
export function createDashboard(deps: DashboardDeps, log: Logger) {
  const attempts = {
    address: new SlidingWindow(20, 60_000, deps.clock),
    email: new SlidingWindow(10, 15 * 60_000, deps.clock),
  }
  const router = new Router<Page>()
  for (const p of dashboardPages(deps, attempts)) router.add(p.method, p.path, p)
  const cookie = cookieName(deps)

  // A POST must come from this site: its Origin is the public URL's (or, with none configured, the Host's). Under
  // Referrer-Policy: no-referrer, browsers send `Origin: null` even for a same-origin form; then the browser's own
  // Sec-Fetch-Site (which no page can set) must say same-origin.
  function sameOrigin(req: IncomingMessage) {
    const origin = req.headers.origin
    if (origin === 'null') return req.headers['sec-fetch-site'] === 'same-origin'
    if (!origin) return false
    if (origin === new URL(deps.publicUrl()).origin) return true
    return !deps.config.STUDIO_PUBLIC_URL && origin === `http://${req.headers.host}`
  }

  async function run(req: IncomingMessage, res: ServerResponse, id: string, headers: string[]): Promise<Outcome> {
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid')
    const path = url.pathname
    if (path === '/' || path === '/dashboard' || path === '/dashboard/') return { redirect: '/dashboard/keys' }
    const match = router.find(req.method ?? 'GET', path)
    if (!match) throw new ApiError({ code: 'not_found', message: 'There is no page here.' })
    if ('allow' in match)
      throw new ApiError({ code: 'method_not_allowed', message: 'This page does not take that method.' })
    const p = match.route
    const token = cookieOf(req, cookie)
    const user = token ? await findSession(deps.sql, token) : null
    if (p.access !== 'public' && !user) {
      if (p.method === 'POST')
        throw new ApiError({ code: 'forbidden', message: 'Your session has ended; sign in again.' })
      return { redirect: '/dashboard/signin' }
    }
    if (p.access === 'admin' && !canManage(user?.role ?? '')) {
      throw new ApiError({ code: 'forbidden', message: 'Only owners and admins can open this page.' })
    }
    let form = new URLSearchParams()
    if (p.method === 'POST') {
      if (!sameOrigin(req)) throw new ApiError({ code: 'forbidden', message: 'This form was sent from another site.' })
      form = await readForm(req, FORM_LIMIT)
      if (user && form.get('csrf') !== user.csrf)
        throw new ApiError({ code: 'forbidden', message: 'This form has expired; reload it.' })
    }
    const ctx = { req, res, id, headers, url, params: match.params, form, user, token } as PageCtx
    return p.handle(ctx)
  }

  function errorPage(e: unknown, req: IncomingMessage, id: string): { status: number; page: Html } {
    let err = e instanceof ApiError ? e : null
    if (!err) {
      // The path without a sign-in link's token (a secret) in it.
      const path = req.url?.split('?')[0].replace(/\/link\/[^/]+/, '/link/…')
      log.error('dashboard error', { id, method: req.method, path }, e)
      err = new ApiError({ code: 'internal_error', message: 'Something went wrong on our side.' })
    }
    const title = TITLES[err.status] ?? 'Error'
    return {
      status: err.status,
      page: bare(
        title,
        html`<div class="card"><h1>${title}</h1><p>${err.message}</p>
<p class="lead">Request id <code>${id}</code></p><p><a href="/dashboard">Back to the dashboard</a></p></div>`
      ),
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, id: string, headers: string[]) {
    const path = (req.url ?? '/').split('?')[0]
    const asset = ASSETS[path]
    if (asset && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, [...headers, ...SECURITY_HEADERS, 'content-type', asset[0]]).end(asset[1])
      return
    }
    let out: Outcome
    try {
      out = await run(req, res, id, headers)
    } catch (e) {
      out = errorPage(e, req, id)
    }
    if (res.headersSent) return void (res.writableEnded || res.destroy())
    if (out instanceof Html) sendHtml(res, 200, out, headers)
    else if ('redirect' in out) redirect(res, out.redirect, headers)
    else if ('page' in out) sendHtml(res, out.status, out.page, headers)
  }

  return {
    owns: ownsDashboardPath,
    handle,
    close() {
      attempts.address.close()
      attempts.email.close()
    },
  }
}
