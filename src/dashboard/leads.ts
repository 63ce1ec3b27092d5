import { listMembers, type Member } from '../accounts/team.js'
import { ApiError, invalid } from '../http/errors.js'
import { leadsCsv } from '../leads/csv.js'
import { addNote, NOTE_MAX, notesOf } from '../leads/notes.js'
import {
  type ExtraFields,
  findLead,
  LEAD_COLUMNS,
  type LeadFilter,
  leadFilter,
  leadsPage,
  markOpened,
} from '../leads/search.js'
import { SPAM_KEEP_DAYS } from '../leads/spam.js'
import { updateLead } from '../leads/update.js'
import { mailIsOn } from '../ops/config.js'
import { LEAD_STATUSES, type LeadStatus } from '../outbox/lead-fields.js'
import { html } from './html.js'
import { exportLink } from './lead-export.js'
import { eraseCard } from './lead-erase.js'
import { csrfField, empty, notice, page, when } from './layout.js'
import { actorOf, type DashboardDeps, type Page, type PageCtx, see } from './page.js'
import { isUuid } from '../storage/uuid.js'
import { streamCsv } from './respond.js'

const PAGE = 50

const query = (f: LeadFilter, extra: Record<string, string>) =>
  new URLSearchParams({
    ...(f.q && { q: f.q }),
    ...(f.from && { from: f.from }),
    ...(f.to && { to: f.to }),
    ...(f.spam && { show: 'spam' }),
    ...(f.status && { status: f.status }),
    ...(f.assignee && { assignee: f.assignee }),
    ...extra,
  }).toString()

const filterOf = ({ url: { searchParams: p }, user }: PageCtx) =>
  leadFilter(p.get('q'), p.get('from'), p.get('to'), p.get('show'), {
    status: p.get('status'),
    assignee: p.get('assignee'),
    me: user.userId,
  })

const option = (value: string, label: string, current: string) =>
  html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`

// The list's status and assignee filters: any, each status; anyone, me, nobody, each user.
const narrows = (f: LeadFilter, members: Member[]) =>
  html`<div class="field"><label for="status">Status</label><select id="status" name="status">${option('', 'Any', f.status)}
${LEAD_STATUSES.map((s) => option(s, s, f.status))}</select></div>
<div class="field"><label for="assignee">Assigned to</label><select id="assignee" name="assignee">
${option('', 'Anyone', f.assignee)}${option('me', 'Me', f.assignee)}${option('nobody', 'Nobody', f.assignee)}
${members.map((m) => option(m.id, m.email, f.assignee))}</select></div>`

// Which leads the list shows: those people sent, or those kept as spam (their hidden honeypot field filled).
const shows = (f: LeadFilter) =>
  html`<div class="field"><label for="show">Show</label><select id="show" name="show">
<option value=""${f.spam ? '' : html` selected`}>Leads</option>
<option value="spam"${f.spam ? html` selected` : ''}>Spam (kept ${SPAM_KEEP_DAYS} days)</option></select></div>`

async function leadsList(deps: DashboardDeps, ctx: PageCtx) {
  const f = filterOf(ctx)
  const after = ctx.url.searchParams.get('after')
  const { leads: shown, next: cursor, first } = await leadsPage(deps.sql, ctx.user.accountId, f, after, PAGE)
  const members = await listMembers(deps.sql, ctx.user.accountId)
  const next = cursor ? `/dashboard/leads?${query(f, { after: cursor })}` : null
  const filtered = f.q || f.from || f.to || f.status || f.assignee
  const body = shown.length
    ? html`<div class="table-wrap scroll-x"><table><thead><tr><th>Received</th><th>Name</th><th>Email</th><th>Company</th>
<th>Status</th><th>Assigned to</th></tr></thead><tbody>${shown.map(
        (l) => html`<tr${l.opened_at ? '' : html` class="unread"`}><td>${when(l.created_at)}</td>
<td><a href="/dashboard/leads/${l.id}">${l.name}</a>${l.opened_at ? '' : html` <span class="badge unread">unread</span>`}</td>
<td>${l.email}</td><td>${l.company ?? '—'}</td><td>${l.status}</td><td>${l.assignee ?? '—'}</td></tr>`
      )}</tbody></table></div>`
    : html`<div class="table-wrap">${empty(
        filtered ? 'No lead matches' : f.spam ? 'No spam' : 'No leads yet',
        filtered || f.spam
          ? html`<p><a href="/dashboard/leads">Clear the filter</a></p>`
          : html`<p>Send one with <code>POST /api/v1/leads</code> and an API key; it appears here.</p>`
      )}</div>`
  return page(
    ctx.user,
    'leads',
    'Leads',
    html`<h1>Leads</h1><p class="lead">What your forms sent through <code>POST /api/v1/leads</code>, newest first.</p>
${notice(ctx.url.searchParams.get('done'))}
<form class="card row" method="get" action="/dashboard/leads" role="search">
<div class="field"><label for="q">Search name, email, company, message</label>
<input id="q" name="q" value="${f.q}"></div>
<div class="field"><label for="from">From</label><input id="from" name="from" type="date" value="${f.from}"></div>
<div class="field"><label for="to">To</label><input id="to" name="to" type="date" value="${f.to}"></div>
${narrows(f, members)}${shows(f)}
<div class="field"><button>Filter</button></div>
<div class="field"><a class="button secondary" href="/dashboard/leads.csv?${query(f, {})}">Export CSV</a></div></form>
${body}<div class="pager">${first ? html`<span></span>` : html`<a href="/dashboard/leads?${query(f, {})}">Newest</a>`}
${next ? html`<a class="button secondary" href="${next}">Older leads →</a>` : ''}</div>`
  )
}

const noLead = () => new ApiError({ code: 'not_found', message: 'There is no such lead in your account.' })

async function leadDetail(deps: DashboardDeps, ctx: PageCtx) {
  const { accountId } = ctx.user
  const { id } = ctx.params
  const lead = await findLead(deps.sql, accountId, id)
  if (!lead) throw noLead()
  await markOpened(deps.sql, accountId, id)
  const members = await listMembers(deps.sql, accountId)
  const notes = (await notesOf(deps.sql, [id])).get(id) ?? []
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
      lead.spam ? html` · <span class="badge revoked">spam</span> (${spamWhy(lead.spam_reason)})` : ''
    }${
      lead.captcha_unverified
        ? html` · <span class="badge grace">CAPTCHA unverified</span> (the CAPTCHA provider could not be asked)`
        : ''
    }</p>
${notice(ctx.url.searchParams.get('done'))}
<form class="card row" method="post" action="/dashboard/leads/${id}">${csrfField(ctx.user)}
<div class="field"><label for="lead-status">Status</label><select id="lead-status" name="status">
${LEAD_STATUSES.map((s) => option(s, s, lead.status))}</select></div>
<div class="field"><label for="lead-assignee">Assigned to</label><select id="lead-assignee" name="assignee">
${option('', 'Nobody', lead.assignee ?? '')}${members.map((m) => option(m.email, m.name ? `${m.name} (${m.email})` : m.email, lead.assignee ?? ''))}
</select></div><div class="field"><button>Save</button></div></form>
<div class="card"><dl class="fields">${fields}</dl></div>${extraFields(lead.fields)}
${exportLink(ctx, id)}
<h2>Notes</h2>${
      notes.length
        ? html`<ol class="notes">${notes.map(
            (n) =>
              html`<li class="card"><p class="muted">${n.author}${n.authorKind === 'key' ? ' (API key)' : ''} · ${when(
                new Date(n.createdAt)
              )} UTC</p><p class="note">${n.text}</p></li>`
          )}</ol>`
        : html`<p class="muted">No notes yet.</p>`
    }
<form class="card" method="post" action="/dashboard/leads/${id}/notes">${csrfField(ctx.user)}
<div class="field"><label for="note">Add a note</label>
<textarea id="note" name="text" rows="4" maxlength="${NOTE_MAX}" required></textarea></div>
<div class="field"><button>Add note</button></div></form>
${eraseCard(ctx, id)}`
  )
}

// The status and assignee form: the same change as PATCH /api/v1/leads/{id}, made by the signed-in user.
async function changeLead(deps: DashboardDeps, ctx: PageCtx) {
  if (!isUuid(ctx.params.id)) throw noLead()
  const status = ctx.form.get('status') ?? ''
  if (!(LEAD_STATUSES as readonly string[]).includes(status))
    throw new ApiError({ code: 'bad_request', message: 'Pick a status from the list.' })
  const assignee = ctx.form.get('assignee') || null
  const change = { status: status as LeadStatus, assignee }
  const lead = await updateLead(deps.sql, {
    accountId: ctx.user.accountId,
    id: ctx.params.id,
    change,
    actor: actorOf(ctx),
    mail: mailIsOn(deps.config),
  })
  if (!lead) throw noLead()
  return see(`/dashboard/leads/${lead.id}?done=lead-saved`)
}

// The note form: the same note as POST /api/v1/leads/{id}/notes, by the signed-in user.
async function noteLead(deps: DashboardDeps, ctx: PageCtx) {
  if (!isUuid(ctx.params.id)) throw noLead()
  const text = ctx.form.get('text') ?? ''
  if (text.length > NOTE_MAX) throw invalid([{ path: 'text', message: `must be at most ${NOTE_MAX} characters` }])
  const author = { kind: 'user' as const, email: ctx.user.email }
  const note = await addNote(deps.sql, ctx.user.accountId, ctx.params.id, text, author)
  if (!note) throw noLead()
  return see(`/dashboard/leads/${ctx.params.id}?done=note-added`)
}

const spamWhy = (reason: string | null) =>
  reason === 'captcha_failed' ? 'its CAPTCHA failed' : 'its honeypot field was filled'

// What the form sent beyond the named fields, each under its own name.
const extraFields = (extra: ExtraFields) =>
  extra && Object.keys(extra).length
    ? html`<h2>Other fields</h2><div class="card"><dl class="fields">${Object.entries(extra).map(
        ([name, value]) => html`<dt>${name}</dt><dd>${value || '—'}</dd>`
      )}</dl></div>`
    : ''

// Streamed as it is read.
const exportCsv = (deps: DashboardDeps, ctx: PageCtx) =>
  streamCsv(ctx, 'leads.csv', leadsCsv(deps.sql, ctx.user.accountId, filterOf(ctx)))

export function leadsPages(deps: DashboardDeps): Page[] {
  return [
    { method: 'GET', path: '/dashboard/leads', access: 'user', handle: (ctx) => leadsList(deps, ctx) },
    { method: 'GET', path: '/dashboard/leads.csv', access: 'user', handle: (ctx) => exportCsv(deps, ctx) },
    { method: 'GET', path: '/dashboard/leads/:id', access: 'user', handle: (ctx) => leadDetail(deps, ctx) },
    { method: 'POST', path: '/dashboard/leads/:id', access: 'user', handle: (ctx) => changeLead(deps, ctx) },
    { method: 'POST', path: '/dashboard/leads/:id/notes', access: 'user', handle: (ctx) => noteLead(deps, ctx) },
  ]
}
