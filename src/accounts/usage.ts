import type { Sql } from '../storage/db.js'
import { type Month, monthOf } from '../quota/month.js'
import { limitFor, type QuotaLimits } from '../quota/plans.js'
import { usd } from '../ops/usd.js'

// `studio usage`: per account, one calendar month (UTC): completions answered and failed, tokens, quota used and
// left. It reads the completions table (one row per upstream call, outcome 'ok' when answered) and quota_usage
// (units reserved per account and month), which the completions feature's migrations create.

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/

// The month of `now`, or the month named `YYYY-MM`; null for anything else.
export function usageMonth(spec: number | string): Month | null {
  if (typeof spec === 'number') return monthOf(spec)
  const match = MONTH.exec(spec)
  return match ? monthOf(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)) : null
}

export interface AccountUsage {
  account_id: string
  plan: string
  email: string | null
  completions: number
  failed: number
  input_tokens: string
  output_tokens: string
  // Micro-dollars over the calls with a price, as text (a sum past 2⁵³ stays exact); `unpriced` counts those without.
  cost_micros: string
  unpriced: number
  quota_used: number
  quota_limit: number | null
  quota_left: number | null
}

// Every account, or the one named (the dashboard's usage page).
export async function usageByAccount(
  sql: Sql,
  month: Month,
  quotas: QuotaLimits,
  accountId?: string
): Promise<AccountUsage[]> {
  type Row = Omit<AccountUsage, 'quota_limit' | 'quota_left'>
  const rows = await sql<Row[]>`
      select a.id as account_id, a.plan,
             (select u.email from users u where u.account_id = a.id order by u.created_at, u.id limit 1) as email,
             coalesce(c.completions, 0)::int as completions, coalesce(c.failed, 0)::int as failed,
             coalesce(c.input_tokens, 0)::text as input_tokens, coalesce(c.output_tokens, 0)::text as output_tokens,
             coalesce(c.cost_micros, 0)::text as cost_micros, coalesce(c.unpriced, 0)::int as unpriced,
             coalesce(q.used, 0)::int as quota_used
      from accounts a
      left join (
        select account_id, count(*) filter (where outcome = 'ok') as completions,
               count(*) filter (where outcome <> 'ok') as failed,
               sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
               sum(cost_micros) as cost_micros, count(*) filter (where cost_micros is null) as unpriced
        from completions where created_at >= ${month.start} and created_at < ${month.end} group by account_id
      ) c on c.account_id = a.id
      left join quota_usage q on q.account_id = a.id and q.month = ${month.month}::date
      ${accountId ? sql`where a.id = ${accountId}` : sql``}
    order by a.created_at, a.id`
  return rows.map((r) => {
    const limit = limitFor(quotas, r.plan)
    return { ...r, quota_limit: limit, quota_left: limit === null ? null : Math.max(0, limit - r.quota_used) }
  })
}

export interface DayUsage {
  day: number // 1..31
  completions: number
  failed: number
  // The day's spend over its priced calls, and how many had no price (spendText).
  cost_micros: string
  unpriced: number
}

// One account's answered and failed completions and spend per day of the month (days without any are left out).
export const usageByDay = (sql: Sql, accountId: string, month: Month) => sql<DayUsage[]>`
  select extract(day from created_at at time zone 'UTC')::int as day,
         count(*) filter (where outcome = 'ok')::int as completions,
         count(*) filter (where outcome <> 'ok')::int as failed,
         coalesce(sum(cost_micros), 0)::text as cost_micros,
         count(*) filter (where cost_micros is null)::int as unpriced
  from completions where account_id = ${accountId} and created_at >= ${month.start} and created_at < ${month.end}
  group by 1 order by 1`

export interface KeyUsage {
  key_prefix: string
  name: string | null
  completions: number
  failed: number
  input_tokens: string
  output_tokens: string
  cost_micros: string
  unpriced: number
}

export const usageByKey = (sql: Sql, accountId: string, month: Month) => sql<KeyUsage[]>`
  select c.key_prefix, k.name, count(*) filter (where c.outcome = 'ok')::int as completions,
         count(*) filter (where c.outcome <> 'ok')::int as failed,
         coalesce(sum(c.input_tokens), 0)::text as input_tokens,
         coalesce(sum(c.output_tokens), 0)::text as output_tokens,
         coalesce(sum(c.cost_micros), 0)::text as cost_micros,
         count(*) filter (where c.cost_micros is null)::int as unpriced
  from completions c left join api_keys k on k.prefix = c.key_prefix
  where c.account_id = ${accountId} and c.created_at >= ${month.start} and c.created_at < ${month.end}
  group by c.key_prefix, k.name order by count(*) desc, c.key_prefix`

export interface UpstreamUsage {
  account_id: string
  upstream: string
  calls: number
  failed: number
  // The spend of the completions whose last attempt went to this upstream (a record is priced at its last attempt's
  // model), and how many of them had no price; `completions` counts them.
  completions: number
  cost_micros: string
  unpriced: number
}

// Calls sent to each upstream (every attempt, from each completion's `tries`), per account or for the one named,
// with what the completions it answered last cost.
export const usageByUpstream = (sql: Sql, month: Month, accountId?: string) => sql<UpstreamUsage[]>`
  select c.account_id, t.try->>'upstream' as upstream, count(*)::int as calls,
         count(*) filter (where t.try->>'outcome' <> 'ok')::int as failed,
         count(*) filter (where t.n = jsonb_array_length(c.tries))::int as completions,
         coalesce(sum(c.cost_micros) filter (where t.n = jsonb_array_length(c.tries)), 0)::text as cost_micros,
         count(*) filter (where t.n = jsonb_array_length(c.tries) and c.cost_micros is null)::int as unpriced
  from completions c cross join lateral jsonb_array_elements(coalesce(c.tries, '[]'::jsonb)) with ordinality as t(try, n)
  where c.created_at >= ${month.start} and c.created_at < ${month.end}
    ${accountId ? sql`and c.account_id = ${accountId}` : sql``}
  group by 1, 2 order by 1, 2`

// A key's counts, per account and model instead.
export type ModelUsage = Omit<KeyUsage, 'key_prefix' | 'name'> & { account_id: string; model: string }

// Completions and spend per account and upstream model (the model each record was priced at), or for the account named.
export const usageByModel = (sql: Sql, month: Month, accountId?: string) => sql<ModelUsage[]>`
  select account_id, upstream_model as model, count(*) filter (where outcome = 'ok')::int as completions,
         count(*) filter (where outcome <> 'ok')::int as failed,
         coalesce(sum(input_tokens), 0)::text as input_tokens, coalesce(sum(output_tokens), 0)::text as output_tokens,
         coalesce(sum(cost_micros), 0)::text as cost_micros, count(*) filter (where cost_micros is null)::int as unpriced
  from completions
  where created_at >= ${month.start} and created_at < ${month.end} ${accountId ? sql`and account_id = ${accountId}` : sql``}
  group by account_id, upstream_model order by account_id, sum(cost_micros) desc nulls last, upstream_model`

// Spend as the views show it: USD over the priced calls, and how many calls had no price (their model was in neither
// the price table nor STUDIO_PRICES, or the upstream sent no usage): never a zero that was not free.
export function spendText(u: { cost_micros: string; unpriced: number; completions: number; failed: number }) {
  if (u.unpriced === 0) return usd(u.cost_micros)
  if (u.unpriced === u.completions + u.failed) return 'no price'
  return `${usd(u.cost_micros)} + ${u.unpriced} no price`
}
