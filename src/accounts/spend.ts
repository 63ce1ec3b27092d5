import type { Sql } from '../storage/db.js'
import type { Month } from '../quota/month.js'
import { usd } from '../ops/usd.js'

// An account's spend in a month, as GET /me shows it beside its quota: USD decimal strings. `reserved` is what calls
// under way hold (live processes' budget holds, sql/041); with no budget nothing is held and nothing bounds `remaining`.
export interface Spend {
  budget: string | null
  spent: string
  reserved: string
  remaining: string | null
  resets_at: string
}

export async function spendOf(sql: Sql, accountId: string, month: Month): Promise<Spend> {
  const [row] = await sql<{ budget: string | null; spent: string; reserved: string }[]>`
    select a.budget_micros::text as budget,
           coalesce((select spent_micros from account_spend
                     where account_id = a.id and month = ${month.month}::date), 0)::text as spent,
           coalesce((select sum(h.micros) from budget_holds h
                     join quota_processes p on p.id = h.process_id and p.expires_at > now()
                     where h.account_id = a.id and h.month = ${month.month}::date), 0)::text as reserved
    from accounts a where a.id = ${accountId}`
  const spent = BigInt(row?.spent ?? 0)
  const reserved = BigInt(row?.reserved ?? 0)
  const budget = row?.budget ?? null
  const left = budget === null ? null : BigInt(budget) - spent - reserved
  return {
    budget: budget === null ? null : usd(budget),
    spent: usd(spent.toString()),
    reserved: usd(reserved.toString()),
    remaining: left === null ? null : usd((left < 0n ? 0n : left).toString()),
    resets_at: month.end.toISOString(),
  }
}
