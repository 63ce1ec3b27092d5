import type { Actor } from '../audit/record.js'
import { inBatches } from '../storage/batches.js'
import type { Sql } from '../storage/db.js'
import { eraseOldLeads } from './erase.js'

// Retention (issue 47): at the delivery worker's hourly prune, each account with a retention (accounts/
// lead-retention.ts) has its leads older than that many days erased exactly as an erasure request erases them
// (erase.ts: events tombstoned, deliveries and mails cancelled, logs blanked, lead.erased and an audit entry), in
// batches of 1,000 leads, one transaction each, so that a backlog never holds locks for long.

const RETENTION: Actor = { kind: 'system', name: 'retention' }

// The number of leads erased.
export async function pruneRetention(sql: Sql, now: Date): Promise<number> {
  const accounts = await sql<{ id: string; days: number }[]>`
    select id, lead_retention_days as days from accounts where lead_retention_days is not null`
  let erased = 0
  for (const { id, days } of accounts) {
    const before = new Date(now.getTime() - days * 86_400_000)
    erased += await inBatches(async (limit) => {
      const ids = await eraseOldLeads(sql, {
        accountId: id,
        before,
        limit,
        actor: RETENTION,
        why: { retention_days: days },
      })
      return { count: ids.length }
    })
  }
  return erased
}
