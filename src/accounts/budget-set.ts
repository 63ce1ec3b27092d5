import type { TransactionSql } from 'postgres'
import type { Sql } from '../storage/db.js'
import { type Actor, audit } from '../audit/record.js'
import { usd } from '../ops/usd.js'

// USD as the operator writes a budget (`25`, `25.00`, `0.000001`) → micro-dollars; null when it is not one.
export function parseUsd(text: string): number | null {
  const m = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(text)
  if (!m) return null
  return Number(m[1]) * 1_000_000 + Number((m[2] ?? '').padEnd(6, '0'))
}

// Sets (or with null lifts) the monthly budget of the account of the user with this email, recorded in the audit log
// when it changes; the account's id, or null when there is no such user.
export async function setBudget(sql: Sql, email: string, micros: number | null, actor?: Actor): Promise<string | null> {
  return sql.begin(async (tx) => {
    const [old] = await tx<{ account_id: string; budget: string | null }[]>`
      select a.id as account_id, a.budget_micros::text as budget from users u join accounts a on a.id = u.account_id
      where lower(u.email) = lower(${email}) for no key update of a`
    if (!old) return null
    await changeBudget(tx, old, micros, actor)
    return old.account_id
  })
}

// The same for an account by its id (its owner on the dashboard's Account page).
export async function setAccountBudget(sql: Sql, accountId: string, micros: number | null, actor?: Actor) {
  await sql.begin(async (tx) => {
    const [old] = await tx<{ account_id: string; budget: string | null }[]>`
      select id as account_id, budget_micros::text as budget from accounts where id = ${accountId} for no key update`
    if (old) await changeBudget(tx, old, micros, actor)
  })
}

// The account's budget as it is (in micro-dollars, null: none).
export async function accountBudget(sql: Sql, accountId: string): Promise<number | null> {
  const [row] = await sql<{ budget: string | null }[]>`
    select budget_micros::text as budget from accounts where id = ${accountId}`
  return row?.budget == null ? null : Number(row.budget)
}

// updated_at moves so that every server's cached keys of the account learn within a poll whether their calls reserve
// (accounts/auth.ts).
async function changeBudget(
  tx: TransactionSql,
  old: { account_id: string; budget: string | null },
  micros: number | null,
  actor?: Actor
) {
  const accountId = old.account_id
  await tx`update accounts set budget_micros = ${micros}, updated_at = clock_timestamp() where id = ${accountId}`
  const shown = (m: string | number | null) => (m === null ? null : usd(m))
  if (old.budget !== (micros === null ? null : String(micros)))
    await audit(tx, actor, {
      accountId,
      action: 'budget.changed',
      target: accountId,
      before: { budget: shown(old.budget) },
      after: { budget: shown(micros) },
    })
}
