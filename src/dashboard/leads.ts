import { ApiError } from '../http/errors.js'
import type { Sql } from '../storage/db.js'
import { csvLine } from './csv.js'
import { html } from './html.js'
import { empty, page, when } from './layout.js'
import type { DashboardDeps, Page, PageCtx } from './page.js'
import { SECURITY_HEADERS } from './respond.js'

const PAGE = 50
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DAY = /^\d{4}-\d{2}-\d{2}$/

const COLUMNS = [
  'id',
  'created_at',
  'name',
  'email',
  'company',
  'phone',
  'service',
  'budget',
  'message',
  'locale',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'key_prefix',
] as const
type Lead = Record<(typeof COLUMNS)[number], string | null> & { created: Date; key_name: string | null }

interface Filter {
  q: string
  from: string
  to: string
}

function filterOf(url: URL): Filter {
  const day = (s: string | null) => (s && DAY.test(s) && !Number.isNaN(Date.parse(s)) ? s : '')
  return {
    q: (url.searchParams.get('q') ?? '').trim().slice(0, 200),
    from: day(url.searchParams.get('from')),
    to: day(url.searchParams.get('to')),
  }
}

// The account's leads matching the filter, as an SQL fragment (search is a case-insensitive substring match).
function where(sql: Sql, accountId: string, f: Filter) {
  const like = `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  return sql`account_id = ${accountId}
    ${
      f.q
        ? sql`and (name ilike ${like} or email ilike ${like} or company ilike ${like}
                     or message ilike ${like})`
        : sql``
    }
    ${f.from ? sql`and created_at >= ${f.from}::date` : sql``}
    ${f.to ? sql`and created_at < ${f.to}::date + 1` : sql``}`
}

// The cursor is the last row's (created_at, id): the next page is everything strictly older, newest first.
function cursorOf(s: string | null): [string, string] | null {
  if (!s) return null
  const [at, id] = Buffer.from(s, 'base64url').toString('utf8').split('|')
  return at && !Number.isNaN(Date.parse(at)) && UUID.test(id ?? '') ? [at, id] : null
}

const query = (f: Filter, extra: Record<string, string>) =>
  new URLSearchParams({
    ...(f.q && { q: f.q }),
    ...(f.from && { from: f.from }),
    ...(f.to && { to: f.to }),
    ...extra,
  }).toString()

async function leadsList(deps: DashboardDeps, ctx: PageCtx) {
  const { sql } = deps
  const f = filterOf(ctx.url)
  const after = cursorOf(ctx.url.searchParams.get('after'))
  const rows = await sql<
    { id: string; name: string; email: string; company: string | null; service: string; at: string; created_at: Date }[]
  >`
    select id, name, email, company, service, created_at,
           to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
    from leads where ${where(sql, ctx.user.accountId, f)}
    ${after ? sql`and (created_at, id) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : sql``}
    order by created_at desc, id desc limit ${PAGE + 1}`
  const more = rows.length > PAGE
  const shown = rows.slice(0, PAGE)
  const last = shown.at(-1)
  const next =
    more && last
      ? `/dashboard/leads?${query(f, { after: Buffer.from(`${last.at}|${last.id}`).toString('base64url') })}`
      : null
  const body = shown.length
    ? html`<div class="table-wrap"><table><thead><tr><th>Received</th><th>Name</th><th>Email</th><th>Company</th>
<th>Service</th></tr></thead><tbody>${shown.map(
        (l) => html`<tr><td>${when(l.created_at)}</td><td><a href="/dashboard/leads/${l.id}">${l.name}</a></td>
<td>${l.email}</td><td>${l.company ?? '—'}</td><td>${l.service}</td></tr>`
      )}</tbody></table></div>`
    : html`<div class="table-wrap">${empty(
        f.q || f.from || f.to ? 'No lead matches' : 'No leads yet',
        f.q || f.from || f.to
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
<div class="field"><button>Filter</button></div>
<div class="field"><a class="button secondary" href="/dashboard/leads.csv?${query(f, {})}">Export CSV</a></div></form>
${body}<div class="pager">${after ? html`<a href="/dashboard/leads?${query(f, {})}">Newest</a>` : html`<span></span>`}
${next ? html`<a class="button secondary" href="${next}">Older leads →</a>` : ''}</div>`
  )
}

async function leadDetail(deps: DashboardDeps, ctx: PageCtx) {
  const id = ctx.params.id
  if (!UUID.test(id)) throw new ApiError('not_found', 'There is no such lead.')
  const [lead] = await deps.sql<Lead[]>`
    select l.*, l.created_at as created, k.name as key_name from leads l left join api_keys k on k.prefix = l.key_prefix
    where l.id = ${id} and l.account_id = ${ctx.user.accountId}`
  if (!lead) throw new ApiError('not_found', 'There is no such lead in your account.')
  const fields = COLUMNS.filter((c) => c !== 'created_at').map(
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
<p class="lead">Received ${when(lead.created)} UTC</p>
<div class="card"><dl class="fields">${fields}</dl></div>`
  )
}

// Resolves once the response can take more (or is gone), leaving no listener behind.
const writable = (res: PageCtx['res']) =>
  new Promise<void>((ok) => {
    const done = () => {
      res.off('drain', done).off('close', done)
      ok()
    }
    res.on('drain', done).on('close', done)
  })

// Row by row from a cursor: memory stays flat however many leads match. Waits for the socket to drain.
async function exportCsv(deps: DashboardDeps, ctx: PageCtx) {
  const { sql } = deps
  const f = filterOf(ctx.url)
  const { res } = ctx
  res.writeHead(200, [
    ...ctx.headers,
    ...SECURITY_HEADERS,
    'content-type',
    'text/csv; charset=utf-8',
    'content-disposition',
    'attachment; filename="leads.csv"',
  ])
  res.write(csvLine([...COLUMNS]))
  const cursor = sql<Lead[]>`
    select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at, name, email,
           company, phone, service, budget, message, locale, source, utm_source, utm_medium, utm_campaign, key_prefix
    from leads where ${where(sql, ctx.user.accountId, f)} order by created_at desc, id desc`.cursor(200)
  for await (const rows of cursor) {
    if (res.destroyed) break
    const chunk = rows.map((r) => csvLine(COLUMNS.map((c) => r[c]))).join('')
    if (!res.write(chunk)) await writable(res)
  }
  res.end()
  return { streamed: true } as const
}

export function leadsPages(deps: DashboardDeps): Page[] {
  return [
    { method: 'GET', path: '/dashboard/leads', access: 'user', handle: (ctx) => leadsList(deps, ctx) },
    { method: 'GET', path: '/dashboard/leads.csv', access: 'user', handle: (ctx) => exportCsv(deps, ctx) },
    { method: 'GET', path: '/dashboard/leads/:id', access: 'user', handle: (ctx) => leadDetail(deps, ctx) },
  ]
}
