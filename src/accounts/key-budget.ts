import type postgres from 'postgres'
import { type Actor, audit } from '../audit/record.js'
import { usd } from '../ops/usd.js'
import type { Sql } from '../storage/db.js'
import { changeKeyLine, type KeyLineOf, type NewestKey } from './key-line.js'

export type KeyBudgetSet = { ok: true; accountId: string; before: number | null; after: number | null } | { ok: false }

export interface SetKeyBudgetOptions extends KeyLineOf {
  // Micro-dollars a month, or null to lift it.
  micros: number | null
  actor?: Actor
}

// Sets (or with null lifts) the monthly budget of the key `prefix`'s line, as setKeyLimits sets its other limits (which
// can set a budget with them in one transaction).
export const setKeyBudget = (sql: Sql, { micros, actor, ...key }: SetKeyBudgetOptions): Promise<KeyBudgetSet> =>
  changeKeyLine(sql, key, (tx, newest) => budgetLine(tx, newest, micros, actor))

// The change itself, on the locked newest key of a line and the rotated keys counting as it (a line spends one
// budget, sql/047), updated_at moved so that every server's cached principal learns within a poll that its calls
// reserve (completions/budget.ts). A change is one `key.budget_changed` entry in the audit log; setting the same
// budget records nothing.
export async function budgetLine(
  tx: postgres.TransactionSql,
  row: NewestKey,
  micros: number | null,
  actor?: Actor
): Promise<KeyBudgetSet> {
  const [old] = await tx<{ budget: string | null }[]>`
    select budget_micros::text as budget from api_keys where prefix = ${row.prefix}`
  const before = old.budget === null ? null : Number(old.budget)
  const result = { ok: true as const, accountId: row.account_id, before, after: micros }
  if (before === micros) return result
  await tx`update api_keys set budget_micros = ${micros}, updated_at = clock_timestamp()
           where prefix = ${row.prefix} or counts_as = ${row.prefix}`
  const shown = (m: number | null) => (m === null ? null : usd(m))
  await audit(tx, actor, {
    accountId: row.account_id,
    action: 'key.budget_changed',
    target: row.prefix,
    before: { budget: shown(before) },
    after: { budget: shown(micros) },
  })
  return result
}

// The monthly budget of the key `prefix` in micro-dollars, null when none (the dashboard's Limits page shows it).
export async function keyBudget(sql: Sql, prefix: string): Promise<number | null> {
  const [row] = await sql<{ budget: string | null }[]>`
    select budget_micros::text as budget from api_keys where prefix = ${prefix}`
  return row?.budget == null ? null : Number(row.budget)
}
