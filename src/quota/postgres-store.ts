import { randomUUID } from 'node:crypto'
import type { Sql } from '../storage/db.js'
import type { Change, Counted, QuotaStore, UnitStore } from './store.js'

export interface PostgresStoreOptions {
  limits: Record<string, number | null>
  leaseMs: number
  // This process's id in the store's leases (a new one at every start).
  processId?: string
}

// The quota's tables (sql/010) through their functions: each change is one round trip under the account's row lock;
// `keys`, a capped key's (sql/025) under the key's, with the same process and lease.
export function postgresStore(sql: Sql, options: PostgresStoreOptions): QuotaStore & { keys: UnitStore } {
  const { limits, leaseMs, processId: process = randomUUID() } = options
  const apply = (accountId: string, month: string, c: Change) => sql<Counted[]>`
    select granted, spent, used, held, quota_limit as "limit", alive
    from studio_quota_apply(${accountId}, ${month}, ${process}, ${c.reserve}, ${c.spend}, ${c.giveBack}, ${c.unspend},
                            ${sql.json(limits)})`
  const keys: UnitStore = {
    async apply(prefix, month, c) {
      const [row] = await sql<Counted[]>`
        select granted, spent, used, held, quota_limit as "limit", alive
        from studio_quota_key_apply(${prefix}, ${month}, ${process}, ${c.reserve}, ${c.spend}, ${c.giveBack},
                                    ${c.unspend})`
      return row
    },
  }
  return {
    keys,
    async apply(accountId, month, change) {
      return (await apply(accountId, month, change))[0]
    },
    async read(accountId, month) {
      const [row] = await sql<{ used: number; held: number }[]>`
        select coalesce(max(q.used), 0)::int as used,
               (select coalesce(sum(h.units), 0)::int from quota_holds h join quota_processes p on p.id = h.process_id
                where h.account_id = ${accountId} and h.month = ${month} and p.expires_at > now()) as held
        from quota_usage q where q.account_id = ${accountId} and q.month = ${month}`
      return row
    },
    async renew() {
      const [{ lapsed }] = await sql<{ lapsed: boolean }[]>`select studio_quota_renew(${process}, ${leaseMs}) as lapsed`
      return lapsed
    },
    async end() {
      await sql`select studio_quota_end(${process})`
    },
  }
}
