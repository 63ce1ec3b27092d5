import { ApiError } from '../http/errors.js'
import { leadsCsv } from '../leads/csv.js'
import { type ExtraFields, findLead, LEAD_COLUMNS, type LeadFilter, leadFilter, leadsPage } from '../leads/search.js'
import { SPAM_KEEP_DAYS } from '../leads/spam.js'
import { html } from './html.js'
import { empty, page, when } from './layout.js'
import type { DashboardDeps, Page, PageCtx } from './page.js'
import { streamCsv } from './respond.js'

const PAGE = 50

const query = (f: LeadFilter, extra: Record<string, string>) =>
  new URLSearchParams({
    ...(f.q && { q: f.q }),
    ...(f.from && { from: f.from }),
    ...(f.to && { to: f.to }),
    ...(f.spam && { show: 'spam' }),
    ...extra,
  }).toString()

const filterOf = ({ searchParams: p }: URL) => leadFilter(p.get('q'), p.get('from'), p.get('to'), p.get('show'))

// Which leads the list shows: those people sent, or those kept as spam (their hidden honeypot field filled).
const shows = (f: LeadFilter) =>
  html`<div class="field"><label for="show">Show</label><select id="show" name="show">
<option value=""${f.spam ? '' : html` selected`}>Leads</option>
<option value="spam"${f.spam ? html` selected` : ''}>Spam (kept ${SPAM_KEEP_DAYS} days)</option></select></div>`

async function leadsList(deps: DashboardDeps, ctx: PageCtx) {
  const f = filterOf(ctx.url)
  const after = ctx.url.searchParams.get('after')
  const { leads: shown, next: cursor, first } = await leadsPage(deps.sql, ctx.user.accountId, f, after, PAGE)
  const next = cursor ? `/dashboard/leads?${query(f, { after: cursor })}` : null
  const body = shown.length
    ? html`<div class="table-wrap scroll-x"><table><thead><tr><th>Received</th><th>Name</th><th>Email</th><th>Company</th>
<th>Service</th></tr></thead><tbody>${shown.map(
        (l) => html`<tr><td>${when(l.created_at)}</td><td><a href="/dashboard/leads/${l.id}">${l.name}</a></td>
<td>${l.email}</td><td>${l.company ?? '—'}</td><td>${l.service}</td></tr>`
      )}</tbody></table></div>`
    : html`<div class="table-wrap">${empty(
        f.q || f.from || f.to ? 'No lead matches' : f.spam ? 'No spam' : 'No leads yet',
        f.q || f.from || f.to || f.spam
          ? html`<p><a href="/dashboard/leads">Clear the filter</a></p>`
          : html`<p>Send one with <code>POST /api/v1/leads</code> and an API key; it appears here.</p>`
      )}</div>`
  return page(
    ctx.user,
    'leads',
    'Leads',
    html`<h1>Leads</h1><p class="lead">What your forms sent through <code>POST /api/v1/leads</code>, newest first.</p>
<form class="card row" method="get" action="/dashboard/leads" role="search">
<div class="field"><label for="q">Search name, email, company, message</label>
<input id="q" name="q" value="${f.q}"></div>
<div class="field"><label for="from">From</label><input id="from" name="from" type="date" value="${f.from}"></div>
<div class="field"><label for="to">To</label><input id="to" name="to" type="date" value="${f.to}"></div>
${shows(f)}
<div class="field"><button>Filter</button></div>
<div class="field"><a class="button secondary" href="/dashboard/leads.csv?${query(f, {})}">Export CSV</a></div></form>
${body}<div class="pager">${first ? html`<span></span>` : html`<a href="/dashboard/leads?${query(f, {})}">Newest</a>`}
${next ? html`<a class="button secondary" href="${next}">Older leads →</a>` : ''}</div>`
  )
}

async function leadDetail(deps: DashboardDeps, ctx: PageCtx) {
  const lead = await findLead(deps.sql, ctx.user.accountId, ctx.params.id)
  if (!lead) throw new ApiError({ code: 'not_found', message: 'There is no such lead in your account.' })
  const fields = LEAD_COLUMNS.filter((c) => c !== 'created_at' && c !== 'fields').map(
    (c) =>
      html`<dt>${c === 'key_prefix' ? 'created with key' : c.replace('_', ' ')}</dt><dd>${
        c === 'key_prefix' ? html`${lead.key_name ?? 'unnamed'} <code>${lead[c]}</code>` : (lead[c] ?? '—')
      }</dd>`
  )
  return page(
    ctx.user,
    'leads',
    `Lead ${lead.name}`,
    html`<p><a href="/dashboard/leads">← Leads</a></p><h1>${lead.name}</h1>
<p class="lead">Received ${when(lead.created)} UTC${
      lead.spam ? html` · <span class="badge revoked">spam</span> (its honeypot field was filled)` : ''
    }</p>
<div class="card"><dl class="fields">${fields}</dl></div>${extraFields(lead.fields)}`
  )
}

// What the form sent beyond the named fields, each under its own name.
const extraFields = (extra: ExtraFields) =>
  extra && Object.keys(extra).length
    ? html`<h2>Other fields</h2><div class="card"><dl class="fields">${Object.entries(extra).map(
        ([name, value]) => html`<dt>${name}</dt><dd>${value || '—'}</dd>`
      )}</dl></div>`
    : ''

// Streamed as it is read.
const exportCsv = (deps: DashboardDeps, ctx: PageCtx) =>
  streamCsv(ctx, 'leads.csv', leadsCsv(deps.sql, ctx.user.accountId, filterOf(ctx.url)))

export function leadsPages(deps: DashboardDeps): Page[] {
  return [
    { method: 'GET', path: '/dashboard/leads', access: 'user', handle: (ctx) => leadsList(deps, ctx) },
    { method: 'GET', path: '/dashboard/leads.csv', access: 'user', handle: (ctx) => exportCsv(deps, ctx) },
    { method: 'GET', path: '/dashboard/leads/:id', access: 'user', handle: (ctx) => leadDetail(deps, ctx) },
  ]
}
