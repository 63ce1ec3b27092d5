import { leadRetention, parseRetentionDays, RETENTION_MAX_DAYS, setLeadRetention } from '../accounts/lead-retention.js'
import { ApiError } from '../http/errors.js'
import { html } from './html.js'
import { csrfField, errorBanner, page } from './layout.js'
import { actorOf, see, type DashboardDeps, type Page, type PageCtx } from './page.js'

// The Account page's lead retention (issue 47): owners choose how many days the account keeps its leads (empty:
// kept); the delivery worker's hourly prune erases the older ones (src/leads/retention.ts). A plain form.

export async function retentionCard(deps: DashboardDeps, ctx: PageCtx, problem?: string, typed?: string) {
  const days = await leadRetention(deps.sql, ctx.user.accountId)
  const now =
    days === null
      ? html`<p>Leads are kept until someone erases them.</p>`
      : html`<p>Leads older than <strong>${days}</strong> day${days === 1 ? '' : 's'} are erased every hour, everywhere
the service keeps them.</p>`
  if (ctx.user.role !== 'owner')
    return html`<div class="card"><h2>Lead retention</h2>${now}<p class="lead">Only an owner can change it.</p></div>`
  return html`<div class="card"><h2>Lead retention</h2>${now}
${problem ? errorBanner(problem) : ''}
<form method="post" action="/dashboard/account/retention">${csrfField(ctx.user)}
<div class="field"><label for="retention-days">Erase leads older than this many days (empty: keep them)</label>
<input id="retention-days" name="days" type="number" min="1" max="${RETENTION_MAX_DAYS}" step="1" inputmode="numeric"
value="${typed ?? (days === null ? '' : String(days))}"></div>
<button class="secondary">Save retention</button></form></div>`
}

export function retentionPages(deps: DashboardDeps): Page[] {
  return [
    {
      method: 'POST',
      path: '/dashboard/account/retention',
      access: 'user',
      async handle(ctx) {
        if (ctx.user.role !== 'owner')
          throw new ApiError({ code: 'forbidden', message: 'Only an owner can change the lead retention.' })
        const text = (ctx.form.get('days') ?? '').trim()
        const days = text === '' ? null : parseRetentionDays(text)
        if (text !== '' && days === null) {
          const problem = `The retention is a whole number of days from 1 to ${RETENTION_MAX_DAYS}, or empty to keep leads.`
          const card = await retentionCard(deps, ctx, problem, text.slice(0, 20))
          const back = html`<p><a href="/dashboard/account">Back to the Account page</a></p>`
          return {
            status: 422,
            page: page(ctx.user, 'account', 'Lead retention', html`<h1>Account</h1>${card}${back}`),
          }
        }
        await setLeadRetention(deps.sql, ctx.user.accountId, days, actorOf(ctx))
        return see('/dashboard/account?done=retention')
      },
    },
  ]
}
