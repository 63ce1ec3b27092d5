import type { Sql } from '../storage/db.js'
import type { Month } from '../quota/month.js'
import { usd } from '../ops/usd.js'

// An account's spend in a month, as GET /me shows it beside its quota: USD decimal strings. No budget is set yet, so
// nothing is reserved and nothing bounds what remains.
export interface Spend {
  budget: string | null
  spent: string
  reserved: string
  remaining: string | null
  resets_at: string
}

export async function spendOf(sql: Sql, accountId: string, month: Month): Promise<Spend> {
  const [row] = await sql<{ spent: string }[]>`
    select spent_micros::text as spent from account_spend where account_id = ${accountId} and month = ${month.month}::date`
  return {
    budget: null,
    spent: usd(row?.spent ?? 0),
    reserved: usd(0),
    remaining: null,
    resets_at: month.end.toISOString(),
  }
}
