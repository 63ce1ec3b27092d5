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
    return accountId
  })
}
