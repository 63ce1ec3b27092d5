import { type Actor, audit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'

// How long an account keeps its leads (issue 47): a number of days, past which the delivery worker's hourly prune
// erases them (src/leads/retention.ts), or null: kept (the default).

// The most days a retention may name (a hundred years): past it, the cutoff would leave the dates PostgreSQL takes.
export const RETENTION_MAX_DAYS = 36_500

// A retention as the owner writes it (`365`): whole days, 1 to RETENTION_MAX_DAYS; null when it is not one.
export function parseRetentionDays(text: string): number | null {
  if (!/^\d{1,6}$/.test(text)) return null
  const days = Number(text)
  return days >= 1 && days <= RETENTION_MAX_DAYS ? days : null
}

export async function leadRetention(sql: Sql, accountId: string): Promise<number | null> {
  const [row] = await sql<{ days: number | null }[]>`
    select lead_retention_days as days from accounts where id = ${accountId}`
  return row?.days ?? null
}

// Sets (or with null turns off) the account's retention, recorded in the audit log when it changes; false when there
// is no such account.
export async function setLeadRetention(
  sql: Sql,
  accountId: string,
  days: number | null,
  actor?: Actor
): Promise<boolean> {
  return await sql.begin(async (tx) => {
    const [old] = await tx<{ days: number | null }[]>`
      select lead_retention_days as days from accounts where id = ${accountId} for no key update`
    if (!old) return false
    if (old.days === days) return true
    await tx`update accounts set lead_retention_days = ${days}, updated_at = clock_timestamp() where id = ${accountId}`
    await audit(tx, actor, {
      accountId,
      action: 'retention.changed',
      target: accountId,
      before: { lead_retention_days: old.days },
      after: { lead_retention_days: days },
    })
    return true
  })
}
