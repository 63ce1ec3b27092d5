import type { Config } from './config.js'
import type { Sql } from './db.js'
import { ApiError } from './errors.js'

export interface QuotaStatus {
  limit: number | null
  used: number
  remaining: number | null
  resets_at: string
}

export interface Reservation {
  accountId: string
  month: string
}

type Limits = Pick<Config, 'STUDIO_QUOTA_FREE' | 'STUDIO_QUOTA_STARTER' | 'STUDIO_QUOTA_PRO' | 'STUDIO_QUOTA_ENTERPRISE'>

export function monthOf(now: number) {
  const d = new Date(now)
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  return { month: new Date(start).toISOString().slice(0, 10), resetsAt: new Date(next) }
}

export function limitFor(config: Limits, plan: string): number | null {
  switch (plan) {
    case 'FREE':
      return config.STUDIO_QUOTA_FREE
    case 'STARTER':
      return config.STUDIO_QUOTA_STARTER
    case 'PRO':
      return config.STUDIO_QUOTA_PRO
    default:
      return config.STUDIO_QUOTA_ENTERPRISE
  }
}

// The monthly AI quota lives in PostgreSQL: one statement reserves a unit only while the account is under the
// limit of its current plan, so it is exact across concurrent requests and across processes; a failed upstream
// call gives its unit back.
export function createQuota(sql: Sql, config: Limits, clock: () => number = Date.now) {
  const lim = (plan: string) => limitFor(config, plan)
  const planLimit = (account: string) => sql`
    select case plan when 'FREE' then ${lim('FREE')}::int when 'STARTER' then ${lim('STARTER')}::int
                     when 'PRO' then ${lim('PRO')}::int else ${lim('ENTERPRISE')}::int end as lim
    from accounts where id = ${account}`

  return {
    async reserve(accountId: string): Promise<Reservation> {
      const { month, resetsAt } = monthOf(clock())
      const rows = await sql`
        with a as (${planLimit(accountId)})
        insert into quota_usage as q (account_id, month, used)
        select ${accountId}, ${month}, 1 from a where a.lim is null or a.lim > 0
        on conflict (account_id, month) do update set used = q.used + 1
        where (select lim from a) is null or q.used < (select lim from a)
        returning q.used`
      if (rows.length === 1) return { accountId, month }
      const [state] = await sql<{ lim: number | null; used: number }[]>`
        with a as (${planLimit(accountId)})
        select a.lim, coalesce((select used from quota_usage where account_id = ${accountId} and month = ${month}), 0) as used from a`
      const seconds = Math.max(1, Math.ceil((resetsAt.getTime() - clock()) / 1000))
      throw new ApiError(
        'quota_exceeded',
        `The monthly AI quota of this account is used up; it resets at ${resetsAt.toISOString()}`,
        { limit: state?.lim ?? 0, used: state?.used ?? 0, resets_at: resetsAt.toISOString() },
        { 'retry-after': String(seconds) }
      )
    },

    async release(r: Reservation) {
      await sql`update quota_usage set used = used - 1 where account_id = ${r.accountId} and month = ${r.month} and used > 0`
    },

    month: () => monthOf(clock()),
    status(plan: string, used: number): QuotaStatus {
      const limit = lim(plan)
      return { limit, used, remaining: limit === null ? null : Math.max(0, limit - used), resets_at: monthOf(clock()).resetsAt.toISOString() }
    },
  }
}

export type Quota = ReturnType<typeof createQuota>
