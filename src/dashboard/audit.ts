import { type AuditFilter, type AuditRow, actorLabel, auditActors, auditCursor, listAudit } from '../audit/log.js'
import { AUDIT_ACTIONS } from '../audit/record.js'
import { csvLine } from '../ops/csv.js'
import { html } from './html.js'
import { day, empty, page, when } from './layout.js'
import type { DashboardDeps, Page, PageCtx } from './page.js'
import { streamCsv } from './respond.js'

// The Audit log (owners and admins): every change made to the account through the dashboard or the CLI, newest
// first, filtered by action and actor, exported as CSV. Entries are written by the operations themselves (src/audit/).

const PAGE = 100

// An actor as the filter names it: `user:EMAIL` or `cli:OSUSER`.
const actorKey = (r: { actor_kind: string; actor: string }) => `${r.actor_kind}:${r.actor}`
function filterOf(ctx: PageCtx): AuditFilter & { actorText: string } {
  const p = ctx.url.searchParams
  const action = (AUDIT_ACTIONS as readonly string[]).includes(p.get('action') ?? '') ? (p.get('action') as string) : ''
  const actorText = (p.get('actor') ?? '').slice(0, 400)
  const colon = actorText.indexOf(':')
  const kind = actorText.slice(0, colon)
  const actor =
    colon > 0 && (kind === 'user' || kind === 'cli' || kind === 'key' || kind === 'system')
      ? { kind, name: actorText.slice(colon + 1) }
      : undefined
  return { accountId: ctx.user.accountId, action: action || undefined, actor, actorText: actor ? actorText : '' }
}

const query = (f: ReturnType<typeof filterOf>, extra: Record<string, string> = {}) =>
  new URLSearchParams({
    ...(f.action && { action: f.action }),
    ...(f.actorText && { actor: f.actorText }),
    ...extra,
  }).toString()

const values = (v: Record<string, unknown> | null) => (v ? JSON.stringify(v) : '')

const select = (id: string, label: string, current: string, options: [string, string][]) =>
  html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${id}">
<option value="">All</option>${options.map(
    ([value, text]) => html`<option value="${value}"${value === current ? html` selected` : ''}>${text}</option>`
  )}</select></div>`

const shown = (x: unknown) => (x === undefined ? '' : Array.isArray(x) ? x.join(', ') : String(x ?? '—'))

// What changed, a field a line: `field: old → new` (the fields that stayed left out), or only the value where there
// was none before (or is none after). The CSV has the before and after values as JSON.
function change(r: AuditRow) {
  const before = r.before ?? {}
  const after = r.after ?? {}
  const same = (f: string) => r.before && r.after && JSON.stringify(before[f]) === JSON.stringify(after[f])
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((f) => !same(f))
  if (!fields.length) return '—'
  return html`<dl class="change">${fields.map((f) => {
    const [was, is] = [shown(before[f]), shown(after[f])]
    const value = !r.before ? is : !r.after ? was : html`${was} <span aria-label="changed to">→</span> ${is}`
    return html`<div><dt>${f}</dt><dd>${value}</dd></div>`
  })}</dl>`
}

const rowOf = (r: AuditRow) => html`<tr><td>${day(r.at)}<br><span class="muted">${when(r.at, true).slice(11)}</span>
</td><td>${actorLabel(r)}${r.address ? html`<br><span class="muted">from ${r.address}</span>` : ''}</td>
<td><code>${r.action}</code></td><td>${r.target ?? '—'}</td>
<td>${change(r)}</td></tr>`

async function auditPage(deps: DashboardDeps, ctx: PageCtx) {
  const f = filterOf(ctx)
  const before = ctx.url.searchParams.get('before') ?? undefined
  const rows = await listAudit(deps.sql, { ...f, before }, PAGE)
  const actors = (await auditActors(deps.sql, ctx.user.accountId)).map((a) => [actorKey(a), actorLabel(a)])
  const next = rows.length === PAGE ? `/dashboard/audit?${query(f, { before: rows[PAGE - 1].id })}` : null
  const body = rows.length
    ? html`<div class="table-wrap scroll-x"><table class="audit"><thead><tr><th>Time (UTC)</th><th>Actor</th><th>Action</th><th>Target</th>
<th>Change</th></tr></thead><tbody>${rows.map(rowOf)}</tbody></table></div>`
    : html`<div class="table-wrap">${empty('No entries', html`<p>Nothing recorded matches this filter.</p>`)}</div>`
  return page(
    ctx.user,
    'audit',
    'Audit log',
    html`<h1>Audit log</h1><p class="lead">Every change made to this account from the dashboard or the command line,
newest first. Entries are kept ${deps.config.STUDIO_AUDIT_RETENTION_DAYS} days.</p>
<form class="card row" method="get" action="/dashboard/audit" role="search">
${select(
  'action',
  'Action',
  f.action ?? '',
  AUDIT_ACTIONS.map((a) => [a, a])
)}
${select('actor', 'Actor', f.actorText, actors as [string, string][])}
<div class="field"><button>Filter</button></div>
<div class="field"><a class="button secondary" href="/dashboard/audit.csv?${query(f)}">Export CSV</a></div></form>
${body}<div class="pager">${before ? html`<a href="/dashboard/audit?${query(f)}">Newest</a>` : html`<span></span>`}
${next ? html`<a class="button secondary" href="${next}">Older entries →</a>` : ''}</div>`
  )
}

const COLUMNS = ['time', 'actor', 'action', 'target', 'address', 'before', 'after']

async function* auditCsv(deps: DashboardDeps, f: AuditFilter): AsyncGenerator<string> {
  yield csvLine(COLUMNS)
  for await (const rows of auditCursor(deps.sql, f, 'desc'))
    yield rows
      .map((r) =>
        csvLine([r.at.toISOString(), actorLabel(r), r.action, r.target, r.address, values(r.before), values(r.after)])
      )
      .join('')
}

export function auditPages(deps: DashboardDeps): Page[] {
  return [
    { method: 'GET', path: '/dashboard/audit', access: 'admin', handle: (ctx) => auditPage(deps, ctx) },
    {
      method: 'GET',
      path: '/dashboard/audit.csv',
      access: 'admin',
      handle: (ctx) => streamCsv(ctx, 'audit-log.csv', auditCsv(deps, filterOf(ctx))),
    },
  ]
}
