import type postgres from 'postgres'
import type { Sql } from '../storage/db.js'

// What keys with a monthly cap of their own have spent this month (their counts, sql/025), for the dashboard's list:
// units spent (answers released), by prefix; a key in its grace period shows the count it shares with its new key
// (sql/027); a key never capped this month has none.
export async function keyUsage(sql: Sql, prefixes: readonly string[], month: string): Promise<Map<string, number>> {
  if (!prefixes.length) return new Map()
  const rows = await sql<{ prefix: string; used: number }[]>`
    select k.prefix, q.used from api_keys k
    join quota_key_usage q on q.prefix = coalesce(k.counts_as, k.prefix) and q.month = ${month}
    where k.prefix = any(${sql.array([...prefixes])})`
  return new Map(rows.map((r) => [r.prefix, r.used]))
}

// A cap set on a key that had none: what the key was answered this month while it was uncounted (its completions
// recorded so far, the keys it replaced by rotation included) counts toward the cap, so that setting a cap never hands
// out a fresh month.
export async function seedKeyUsage(tx: postgres.TransactionSql, prefix: string, accountId: string) {
  await tx`
    with month as (select date_trunc('month', now() at time zone 'UTC')::date as start)
    insert into quota_key_usage as q (prefix, month, used)
    select ${prefix}, month.start,
      (select count(*)::int from completions c
       where c.account_id = ${accountId} and c.outcome = 'ok'
         and c.key_prefix in (select k.prefix from api_keys k where k.prefix = ${prefix} or k.counts_as = ${prefix})
         and c.created_at >= month.start::timestamp at time zone 'UTC')
    from month
    on conflict (prefix, month) do update set used = greatest(q.used, excluded.used)`
}

// A rotation's move of the old key's count to its new key, before the old key is pointed at it (sql/027): the old
// key's count rows (this month's and the next's made if missing: a process's clock may be a little ahead at the
// turn of a month) are locked, so that a batch on the old key either lands before the move and is moved with it, or
// waits and then follows counts_as; what it spent (every month) is copied, and what live processes hold ahead for it
// moves along.
export async function moveKeyCount(tx: postgres.TransactionSql, from: string, to: string) {
  await tx`insert into quota_key_usage (prefix, month, used)
           values (${from}, date_trunc('month', now() at time zone 'UTC')::date, 0),
                  (${from}, (date_trunc('month', now() at time zone 'UTC') + interval '1 month')::date, 0)
           on conflict do nothing`
  await tx`select 1 from quota_key_usage where prefix = ${from} for update`
  await tx`insert into quota_key_usage (prefix, month, used) select ${to}, month, used from quota_key_usage
           where prefix = ${from} on conflict do nothing`
  await tx`insert into quota_key_holds as h (prefix, month, process_id, units)
           select ${to}, month, process_id, units from quota_key_holds where prefix = ${from}
           on conflict (prefix, month, process_id) do update set units = h.units + excluded.units`
  await tx`delete from quota_key_holds where prefix = ${from}`
}
