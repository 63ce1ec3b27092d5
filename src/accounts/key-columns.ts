import { type Actor, type AuditAction, type AuditEntry, audit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'

export interface KeyColumnsOf {
  prefix: string
  // Limits the change to that account's keys (the dashboard's).
  accountId?: string
  actor?: Actor
}

// What a setter makes of the key's row: its result, and the columns to write with the audit entry's values (none:
// nothing changes, nothing is recorded, as when it refuses).
interface KeyColumnsDecision<R> {
  result: R
  change?: { set: Record<string, string | number | boolean | null> } & Required<Pick<AuditEntry, 'before' | 'after'>>
}

interface ChangeKeyColumnsOptions<Row> extends KeyColumnsOf {
  // The columns `decide` reads.
  columns: readonly (keyof Row & string)[]
  // The audit entry's action.
  action: AuditAction
}

// Sets some columns of the key `prefix` in one transaction: its row's `columns` (and account_id) read locked, what
// `decide` makes of them written with one `action` entry in the audit log, by `actor`. updated_at moves so that every
// server drops its cached copy within a poll. An unknown prefix (or another account's) is { ok: false, 'not_found' }.
export function changeKeyColumns<Row extends object, R>(
  sql: Sql,
  { prefix, accountId, actor, columns, action }: ChangeKeyColumnsOptions<Row>,
  decide: (row: Row & { account_id: string }) => KeyColumnsDecision<R>
) {
  const names: string[] = [...columns]
  return sql.begin(async (tx): Promise<R | { ok: false; reason: 'not_found' }> => {
    const [row] = await tx<(Row & { account_id: string })[]>`
      select account_id, ${tx(names)} from api_keys
      where prefix = ${prefix} ${accountId ? tx`and account_id = ${accountId}` : tx``} for update`
    if (!row) return { ok: false, reason: 'not_found' }
    const { result, change } = decide(row)
    if (!change) return result
    const { set, before, after } = change
    await tx`update api_keys set ${tx(set)}, updated_at = clock_timestamp() where prefix = ${prefix}`
    await audit(tx, actor, { accountId: row.account_id, action, target: prefix, before, after })
    return result
  })
}
