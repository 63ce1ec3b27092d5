import type postgres from 'postgres'
import type { Sql } from '../storage/db.js'

// The newest key of a line of rotations (sql/027) as a change of the line's limits or budget finds it.
export type NewestKey = {
  prefix: string
  account_id: string
  rate_limit: number | null
  monthly_completions: number | null
  models: string[] | null
  tokens_per_minute: number | null
}

// The newest key of `prefix`'s line of rotations (itself when it was never rotated; sql/027), locked as a rotation
// locks it (`for no key update`: a count row's foreign key check still passes) and only it, so that the order of locks
// is a rotation's. 'moved': it was rotated meanwhile, and the caller starts again in a new transaction (the lock taken
// here must not be held while the next key is locked).
async function lockNewest(tx: postgres.TransactionSql, prefix: string, accountId?: string) {
  const [k] = await tx<{ newest: string }[]>`
    select coalesce(counts_as, prefix) as newest from api_keys
    where prefix = ${prefix} ${accountId ? tx`and account_id = ${accountId}` : tx``}`
  if (!k) return null
  const [row] = await tx<(NewestKey & { counts_as: string | null })[]>`
    select prefix, account_id, rate_limit, monthly_completions, models, tokens_per_minute, counts_as from api_keys
    where prefix = ${k.newest} for no key update`
  if (!row) return null
  return row.counts_as === null ? row : 'moved'
}

export interface KeyLineOf {
  prefix: string
  // Limits the change to that account's keys (the dashboard's).
  accountId?: string
}

// Runs `change` in one transaction on the locked newest key of `prefix`'s line, so that what it writes and its audit
// entries commit together; { ok: false } when there is no such key. A line rotated meanwhile starts it again.
export function changeKeyLine<T>(
  sql: Sql,
  key: KeyLineOf,
  change: (tx: postgres.TransactionSql, newest: NewestKey) => Promise<T>
): Promise<T | { ok: false }> {
  return sql
    .begin(async (tx): Promise<{ done: T | { ok: false } } | 'moved'> => {
      const row = await lockNewest(tx, key.prefix, key.accountId)
      if (row === 'moved') return row
      return { done: row ? await change(tx, row) : { ok: false } }
    })
    .then((r) => (r === 'moved' ? changeKeyLine(sql, key, change) : r.done))
}
