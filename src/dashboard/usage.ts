import {
  type DayUsage,
  type KeyUsage,
  type ModelUsage,
  type UpstreamUsage,
  spendText,
  usageByAccount,
  usageByDay,
  usageByKey,
  usageByModel,
  usageByUpstream,
  usageMonth,
} from '../accounts/usage.js'
import { callsCsv } from '../accounts/usage-csv.js'
import { type Spend, spendOf } from '../accounts/spend.js'
import { type Month, monthOf } from '../quota/month.js'
import { usd } from '../ops/usd.js'
import { html, type Html } from './html.js'
import { empty, page } from './layout.js'
import type { DashboardDeps, Page, PageCtx } from './page.js'
import { streamCsv } from './respond.js'

const fmt = (n: number | string) => Number(n).toLocaleString('en-US')

const axisLabel = (x: number, y: number, day: number) =>
  html`<text class="axis" x="${x}" y="${y}" text-anchor="middle">${day}</text>`

// Completions per day as bars and spend per day as a line over them (on its own scale), drawn here: no script, no
// inline style (the CSP forbids both). A day whose calls all had no price breaks the line (its spend is unknown, not
// 0) and says so in its title; a day without calls spent 0.
function dayChart(month: Month, days: DayUsage[]): Html {
  const count = Math.round((month.end.getTime() - month.start.getTime()) / 86_400_000)
  const byDay = new Map(days.map((d) => [d.day, d]))
  const max = Math.max(1, ...days.map((d) => d.completions))
  const priced = days.filter((d) => d.unpriced < d.completions + d.failed)
  const most = Math.max(0, ...priced.map((d) => Number(d.cost_micros)))
  const w = 24
  const h = 160
  const x = (day: number) => (day - 1) * w + w / 2
  const y = (d: DayUsage | undefined) =>
    Math.round(h - 20 - (Number(d?.cost_micros ?? 0) / Math.max(1, most)) * (h - 28))
  const date = (day: number) => `${month.month.slice(0, 8)}${String(day).padStart(2, '0')}`
  let path = ''
  let pen = false
  for (let day = 1; day <= count && priced.length; day++) {
    const d = byDay.get(day)
    if (d && d.unpriced === d.completions + d.failed) pen = false
    else {
      path += `${pen ? 'L' : 'M'}${x(day)},${y(d)} `
      pen = true
    }
  }
  const bars = Array.from({ length: count }, (_, i) => {
    const d = byDay.get(i + 1)
    const n = d?.completions ?? 0
    const bh = Math.round((n / max) * (h - 20))
    const spent = d ? `, spent ${spendText(d)} (USD)` : ''
    return html`<g><title>${date(i + 1)}: ${n} completions${spent}</title>
<rect class="track" x="${i * w + 2}" y="0" width="${w - 4}" height="${h - 20}" rx="2"></rect>
<rect class="bar" x="${i * w + 2}" y="${h - 20 - bh}" width="${w - 4}" height="${bh}" rx="2"></rect>
${(i + 1) % 5 === 1 ? axisLabel(i * w + w / 2, h - 4, i + 1) : ''}</g>`
  })
  const dots = priced.map(
    (d) =>
      html`<circle class="cost" cx="${x(d.day)}" cy="${y(d)}" r="3"><title>${date(d.day)}: spent ${spendText(
        d
      )} (USD)</title></circle>`
  )
  const spend = priced.length ? `at most ${usd(most)} USD on one day` : 'no price for any call'
  return html`<svg class="chart" viewBox="0 0 ${count * w} ${h}" role="img"
aria-label="Completions per day, at most ${max} on one day; spend per day, ${spend}">${bars}
${path ? html`<path class="cost" d="${path.trim()}"></path>` : ''}${dots}</svg>
<p class="legend"><span class="key bar"></span> completions <span class="key cost"></span> spend (own scale; ${spend})</p>`
}

// This month's spend against the account's budget, when one is set.
function budgetBar(s: Spend): Html {
  if (s.budget === null) return html``
  const budget = Number(s.budget)
  const used = Number(s.spent) + Number(s.reserved)
  const share = budget === 0 ? 1 : Math.min(1, used / budget)
  return html`<div class="card"><h2>Budget</h2><svg class="chart" viewBox="0 0 1000 16" role="img"
aria-label="${s.spent} of ${s.budget} USD spent"><rect class="track" x="0" y="0" width="1000" height="16" rx="8"></rect>
<rect class="bar${share >= 1 ? ' over' : ''}" x="0" y="0" width="${Math.round(share * 1000)}" height="16" rx="8"></rect></svg>
<p>${s.spent} USD spent${s.reserved === '0.000000' ? '' : html` and ${s.reserved} held by calls under way`}
of ${s.budget} · ${s.remaining} remaining · resets ${s.resets_at.slice(0, 10)}</p></div>`
}

function quotaBar(used: number, limit: number | null): Html {
  if (limit === null) return html`<p>Unlimited on this plan.</p>`
  const share = limit === 0 ? 1 : Math.min(1, used / limit)
  return html`<svg class="chart" viewBox="0 0 1000 16" role="img" aria-label="${fmt(used)} of ${fmt(limit)} used">
<rect class="track" x="0" y="0" width="1000" height="16" rx="8"></rect>
<rect class="bar" x="0" y="0" width="${Math.round(share * 1000)}" height="16" rx="8"></rect></svg>`
}

const keyTable = (keys: KeyUsage[]) =>
  keys.length
    ? html`<div class="table-wrap scroll-x"><table><thead><tr><th>Key</th><th class="num">Completions</th>
<th class="num">Failed</th>
<th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost (USD)</th></tr></thead><tbody>${keys.map(
        (k) => html`<tr><td>${k.name ?? '—'} <code>${k.key_prefix}</code></td><td class="num">${fmt(k.completions)}</td>
<td class="num">${fmt(k.failed)}</td><td class="num">${fmt(k.input_tokens)}</td>
<td class="num">${fmt(k.output_tokens)}</td><td class="num">${spendText(k)}</td></tr>`
      )}</tbody></table></div>`
    : html`<div class="table-wrap">${empty(
        'No completions this month',
        html`<p>Call <code>POST /api/v1/ai/completions</code> with a key.</p>`
      )}</div>`

// Shown only once some completion went through a named upstream (rows from before that have no attempts recorded).
// The cost is of the completions an upstream answered last (a record is priced at its last attempt's model).
const upstreamTable = (rows: UpstreamUsage[]) =>
  rows.length
    ? html`<h2>By upstream</h2><div class="table-wrap scroll-x"><table><thead><tr><th>Upstream</th>
<th class="num">Calls</th><th class="num">Failed</th><th class="num">Cost (USD)</th></tr></thead><tbody>${rows.map(
        (r) => html`<tr><td>${r.upstream}</td><td class="num">${fmt(r.calls)}</td>
<td class="num">${fmt(r.failed)}</td><td class="num">${
          r.completions === 0 ? '—' : spendText({ ...r, failed: 0 })
        }</td></tr>`
      )}</tbody></table></div>`
    : ''

const modelTable = (rows: ModelUsage[]) =>
  rows.length
    ? html`<h2>By model</h2><div class="table-wrap scroll-x"><table><thead><tr><th>Model</th>
<th class="num">Completions</th><th class="num">Failed</th><th class="num">Tokens in</th>
<th class="num">Tokens out</th><th class="num">Cost (USD)</th></tr></thead><tbody>${rows.map(
        (r) => html`<tr><td><code>${r.model}</code></td><td class="num">${fmt(r.completions)}</td>
<td class="num">${fmt(r.failed)}</td><td class="num">${fmt(r.input_tokens)}</td>
<td class="num">${fmt(r.output_tokens)}</td><td class="num">${spendText(r)}</td></tr>`
      )}</tbody></table></div>`
    : ''

function months(now: Date, selected: string) {
  return Array.from({ length: 12 }, (_, i) => {
    const m = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1)).toISOString().slice(0, 7)
    return html`<option value="${m}"${m === selected ? html` selected` : ''}>${m}</option>`
  })
}

async function usagePage(deps: DashboardDeps, ctx: PageCtx) {
  const now = (deps.clock ?? Date.now)()
  // `?month=YYYY-MM`, or this month when it is absent or not a month.
  const month = usageMonth(ctx.url.searchParams.get('month') ?? '') ?? monthOf(now)
  const { sql, config } = deps
  const accountId = ctx.user.accountId
  const thisMonth = month.month === monthOf(now).month
  const [[u], days, keys, upstreams, models, spend] = await Promise.all([
    usageByAccount(sql, month, config, accountId),
    usageByDay(sql, accountId, month),
    usageByKey(sql, accountId, month),
    usageByUpstream(sql, month, accountId),
    usageByModel(sql, month, accountId),
    thisMonth ? spendOf(sql, accountId, month) : null,
  ])
  const stat = (value: string, label: string) => html`<div class="stat"><b>${value}</b><span>${label}</span></div>`
  return page(
    ctx.user,
    'usage',
    'Usage',
    html`<h1>Usage</h1><p class="lead">Plan <strong>${u.plan}</strong> · ${month.month.slice(0, 7)} (UTC)</p>
<form method="get" action="/dashboard/usage" class="row card"><div class="field"><label for="month">Month</label>
<select id="month" name="month">${months(new Date(now), month.month.slice(0, 7))}</select></div>
<div class="field"><button class="secondary">Show</button></div>
<div class="field"><a class="button secondary" href="/dashboard/usage.csv?month=${month.month.slice(0, 7)}">Export
calls (CSV)</a></div></form>
<div class="card"><h2>AI quota</h2>${quotaBar(u.quota_used, u.quota_limit)}
<p>${fmt(u.quota_used)} used of ${u.quota_limit === null ? 'unlimited' : fmt(u.quota_limit)}${
      u.quota_left === null ? '' : html` · ${fmt(u.quota_left)} remaining`
    } · resets ${month.end.toISOString().slice(0, 10)}</p></div>
<div class="stats">${stat(fmt(u.completions), 'completions')}${stat(fmt(u.failed), 'failed calls')}
${stat(fmt(u.input_tokens), 'tokens in')}${stat(fmt(u.output_tokens), 'tokens out')}
${stat(spendText(u), 'spent (USD)')}</div>${spend ? budgetBar(spend) : ''}
<div class="card"><h2>Completions and spend per day</h2>${dayChart(month, days)}</div>
<h2>By key</h2>${keyTable(keys)}${modelTable(models)}${upstreamTable(upstreams)}`
  )
}

// GET /dashboard/usage.csv?month=YYYY-MM (this month when absent or not a month): the account's calls, streamed.
function exportCalls(deps: DashboardDeps, ctx: PageCtx) {
  const now = (deps.clock ?? Date.now)()
  const month = usageMonth(ctx.url.searchParams.get('month') ?? '') ?? monthOf(now)
  const name = `calls-${month.month.slice(0, 7)}.csv`
  return streamCsv(ctx, name, callsCsv(deps.sql, ctx.user.accountId, month))
}

export const usagePages = (deps: DashboardDeps): Page[] => [
  { method: 'GET', path: '/dashboard/usage', access: 'user', handle: (ctx) => usagePage(deps, ctx) },
  { method: 'GET', path: '/dashboard/usage.csv', access: 'user', handle: (ctx) => exportCalls(deps, ctx) },
]
