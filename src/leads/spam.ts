import type { Sql } from '../storage/db.js'
import { inBatches } from '../storage/batches.js'

// Leads kept as spam (their honeypot field filled: insert.ts) stay 30 days, for a look under the dashboard's Spam
// filter, then are deleted in batches at the delivery worker's hourly prune.
export const SPAM_KEEP_DAYS = 30

export const pruneSpam = (sql: Sql, now: Date) =>
  inBatches(
    (limit) => sql`delete from leads where id in (
      select id from leads where spam and created_at < ${new Date(now.getTime() - SPAM_KEEP_DAYS * 86_400_000)}
      limit ${limit} for update skip locked)`
  )
