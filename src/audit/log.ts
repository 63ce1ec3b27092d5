import type postgres from 'postgres'
import type { Sql } from '../storage/db.js'
import { inBatches } from '../storage/batches.js'

export interface AuditRow {
  id: string
  at: Date
  account_id: string | null
  actor_kind: 'user' | 'cli' | 'key' | 'system'
  actor: string
  action: string
  target: string | null
  address: string | null
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

// How an entry's actor reads: the user's email, or `cli (osuser)`.
export const actorLabel = (r: { actor_kind: string; actor: string }) =>
  r.actor_kind === 'user' ? r.actor : `${r.actor_kind} (${r.actor})`

// Which entries: one account's (undefined: every entry, those of no account included), of one action, of one actor
// (kind and name), at or after `since`, older than the entry `before` (an id: the next page).
export interface AuditFilter {
  accountId?: string
  action?: string
  actor?: { kind: string; name: string }
  since?: Date
  before?: string
}

// Entries before the entry `id` (a page's last), newest first; an id that is not a number matches nothing older.
const olderThan = (sql: Sql, id: string | undefined) =>
  id === undefined
    ? sql``
    : sql`and (at, id) < (select at, id from audit_log where id = ${/^\d{1,18}$/.test(id) ? id : '0'})`

const matching = (sql: Sql, f: AuditFilter) => sql`true
  ${f.accountId === undefined ? sql`` : sql`and account_id = ${f.accountId}`}
  ${f.action ? sql`and action = ${f.action}` : sql``}
  ${f.actor ? sql`and actor_kind = ${f.actor.kind} and actor = ${f.actor.name}` : sql``}
  ${f.since ? sql`and at >= ${f.since}` : sql``}
  ${olderThan(sql, f.before)}`

const columns = (sql: Sql) => sql`id, at, account_id, actor_kind, actor, action, target, address, before, after`

// A page of entries, newest first.
export const listAudit = (sql: Sql, f: AuditFilter, limit: number) => sql<AuditRow[]>`
  select ${columns(sql)} from audit_log where ${matching(sql, f)} order by at desc, id desc limit ${limit}`

// Every matching entry, oldest first, in chunks read from a cursor (the CLI's table, the dashboard's CSV export).
export function auditCursor(sql: Sql, f: AuditFilter, order: 'asc' | 'desc'): AsyncIterable<AuditRow[]> {
  const by = order === 'asc' ? sql`order by at, id` : sql`order by at desc, id desc`
  return sql<AuditRow[]>`select ${columns(sql)} from audit_log where ${matching(sql, f)} ${by}`.cursor(200)
}

// The actors of an account's entries (for the dashboard's filter).
export const auditActors = (sql: Sql, accountId: string) => sql<{ actor_kind: string; actor: string }[]>`
  select distinct actor_kind, actor from audit_log where account_id = ${accountId} order by actor_kind desc, actor`

// Entries older than `days` days are deleted (the delivery worker runs this once an hour). Returns the rows deleted.
export const pruneAudit = (sql: Sql | postgres.TransactionSql, now: Date, days: number) =>
  inBatches(
    (limit) => sql`delete from audit_log where id in (
      select id from audit_log where at < ${new Date(now.getTime() - days * 86_400_000)}
      limit ${limit} for update skip locked)`
  )
