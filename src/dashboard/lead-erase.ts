import { ApiError } from '../http/errors.js'
import { eraseLeads, leadsOfPerson } from '../leads/erase.js'
import { findLead } from '../leads/search.js'
import { html } from './html.js'
import { canManage, confirmStep, csrfField } from './layout.js'
import { actorOf, type DashboardDeps, type Page, type PageCtx, see } from './page.js'

// The lead page's erasure (issue 47), for owners and admins: the lead, or every lead from its address, each after a
// confirmation step on a page of its own (so without script too), through leads/erase.ts as the API and the CLI.

// The lead page's erase buttons; none for a member.
export const eraseCard = (ctx: PageCtx, id: string) =>
  canManage(ctx.user.role)
    ? html`<h2>Erase</h2><div class="card"><p class="muted">The person's data goes from everywhere the service keeps it:
this lead, its notes, its events' payloads, and what of them was not sent yet.</p><div class="row">
<form class="inline" method="post" action="/dashboard/leads/${id}/erase">${csrfField(ctx.user)}
<button class="danger">Erase</button></form>
<form class="inline" method="post" action="/dashboard/leads/${id}/erase-person">${csrfField(ctx.user)}
<button class="danger">Erase every lead from this address</button></form></div></div>`
    : ''

const noLead = () => new ApiError({ code: 'not_found', message: 'There is no such lead in your account.' })

// The lead of the page, its id checked (findLead).
async function leadOf(deps: DashboardDeps, ctx: PageCtx) {
  const lead = await findLead(deps.sql, ctx.user.accountId, ctx.params.id)
  if (!lead) throw noLead()
  return { id: ctx.params.id, name: lead.name ?? '', email: lead.email ?? '' }
}

const WHAT = html`its notes and extra fields go, its events become tombstones, and its webhook deliveries and mails
not sent yet are cancelled. Copies already delivered to webhook receivers and inboxes, and the database's backups
until they rotate out, are out of reach. This cannot be undone.`

async function eraseOne(deps: DashboardDeps, ctx: PageCtx) {
  const lead = await leadOf(deps, ctx)
  const action = `/dashboard/leads/${lead.id}/erase`
  if (ctx.form.get('confirm') !== 'yes')
    return confirmStep(ctx.user, 'leads', {
      title: `Erase the lead from ${lead.name}?`,
      body: html`<p>The lead from <strong>${lead.name}</strong> (${lead.email}) is erased: ${WHAT}</p>`,
      action,
      button: 'Erase the lead',
      cancel: `/dashboard/leads/${lead.id}`,
    })
  await eraseLeads(deps.sql, { accountId: ctx.user.accountId, ids: [lead.id], actor: actorOf(ctx) })
  return see('/dashboard/leads?done=lead-erased')
}

async function erasePerson(deps: DashboardDeps, ctx: PageCtx) {
  const lead = await leadOf(deps, ctx)
  const ids = await leadsOfPerson(deps.sql, ctx.user.accountId, lead.email)
  if (ctx.form.get('confirm') !== 'yes') {
    const count = ids.length === 1 ? 'its one lead' : `all ${ids.length} of its leads`
    return confirmStep(ctx.user, 'leads', {
      title: `Erase every lead from ${lead.email}?`,
      body: html`<p>Every lead of this account from <strong>${lead.email}</strong>, in any case, is erased:
${count}. For each, ${WHAT}</p>`,
      action: `/dashboard/leads/${lead.id}/erase-person`,
      button: 'Erase every lead from this address',
      cancel: `/dashboard/leads/${lead.id}`,
    })
  }
  await eraseLeads(deps.sql, { accountId: ctx.user.accountId, ids, actor: actorOf(ctx) })
  return see('/dashboard/leads?done=leads-erased')
}

export const leadErasePages = (deps: DashboardDeps): Page[] => [
  { method: 'POST', path: '/dashboard/leads/:id/erase', access: 'admin', handle: (ctx) => eraseOne(deps, ctx) },
  {
    method: 'POST',
    path: '/dashboard/leads/:id/erase-person',
    access: 'admin',
    handle: (ctx) => erasePerson(deps, ctx),
  },
]
