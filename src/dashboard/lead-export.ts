import { ApiError } from '../http/errors.js'
import { exportPerson } from '../leads/export.js'
import { getLead } from '../leads/read.js'
import { isUuid } from '../storage/uuid.js'
import { html } from './html.js'
import { canManage } from './layout.js'
import type { DashboardDeps, Page, PageCtx } from './page.js'
import { sendJsonDownload } from './respond.js'

// The lead page's "Export this person's data" (issue 47): everything the account holds about the lead's email
// address, across its leads, as the JSON document `studio leads export` prints (src/leads/export.ts), downloaded.

// Owners and admins: the export holds the delivery and mail logs of the person's leads, which only they may read.
export const exportLink = (ctx: PageCtx, id: string) =>
  canManage(ctx.user.role)
    ? html`<p><a class="button secondary" href="/dashboard/leads/${id}/export" download>Export this person's data</a>
<span class="muted">(every lead from this address, as JSON)</span></p>`
    : ''

// A name for the file made of the address alone, safe in a header: `person-ada-example.org.json`.
const fileName = (email: string) =>
  `person-${email
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .slice(0, 100)}.json`

async function exportDownload(deps: DashboardDeps, ctx: PageCtx) {
  const lead = isUuid(ctx.params.id) ? await getLead(deps.sql, ctx.user.accountId, ctx.params.id) : null
  if (!lead) throw new ApiError({ code: 'not_found', message: 'There is no such lead in your account.' })
  return sendJsonDownload(ctx, fileName(lead.email), await exportPerson(deps.sql, ctx.user.accountId, lead.email))
}

export const leadExportPages = (deps: DashboardDeps): Page[] => [
  { method: 'GET', path: '/dashboard/leads/:id/export', access: 'admin', handle: (ctx) => exportDownload(deps, ctx) },
]
