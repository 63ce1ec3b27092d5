import type { Config } from '../ops/config.js'
import { withTimeout, type Sql } from '../storage/db.js'
import { ApiError } from '../http/errors.js'
import { monthOf } from './month.js'

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

export type QuotaLimits = Pick<
  Config,
  'STUDIO_QUOTA_FREE' | 'STUDIO_QUOTA_STARTER' | 'STUDIO_QUOTA_PRO' | 'STUDIO_QUOTA_ENTERPRISE'
>

// The plan → monthly limit table (null: unlimited), the one place it is written: the usage report reads it through
// limitFor, and studio_quota_reserve receives it whole (sql/008) to look up the plan it reads under the row lock.
const limitsByPlan = (config: QuotaLimits): Record<string, number | null> => ({
  FREE: config.STUDIO_QUOTA_FREE,
  STARTER: config.STUDIO_QUOTA_STARTER,
  PRO: config.STUDIO_QUOTA_PRO,
  ENTERPRISE: config.STUDIO_QUOTA_ENTERPRISE,
})

// Plans are checked by the database (accounts.plan); anything else is treated as the unbounded plan, ENTERPRISE.
export function limitFor(config: QuotaLimits, plan: string): number | null {
  const limits = limitsByPlan(config)
  return plan in limits ? limits[plan] : limits.ENTERPRISE
}

// A reservation the database has not answered in time fails its requests with 503; if it commits later, the units
// it granted are given back (withTimeout's onLate), so a slow database never charges for completions that were not made.

interface Waiter {
  resolve: (r: Reservation) => void
  reject: (e: unknown) => void
}

// The monthly AI quota lives in PostgreSQL. A unit is reserved before the upstream call and given back if the call
// fails. Concurrent reservations of one account in this process are batched into one call of
// studio_quota_reserve, which grants at most what is left under the limit of the account's current plan while
// holding the row lock: exact across concurrent requests and across processes, one round trip per batch.
export function createQuota(sql: Sql, config: QuotaLimits, clock: () => number = Date.now, timeoutMs = 0) {
  const limits = limitsByPlan(config)
  const waiting = new Map<string, Waiter[]>()
  const running = new Set<string>()
  const listeners: ((accountId: string) => void)[] = []
  const changed = (accountId: string) => listeners.forEach((fn) => fn(accountId))

  async function drain(accountId: string) {
    running.add(accountId)
    try {
      for (let batch = waiting.get(accountId); batch?.length; batch = waiting.get(accountId)) {
        waiting.delete(accountId)
        const { month, end: resetsAt } = monthOf(clock())
        try {
          const query = sql<{ granted: number; now_used: number; quota_limit: number | null }[]>`
            select * from studio_quota_reserve(${accountId}, ${month}, ${batch.length}, ${sql.json(limits)})`
          const [r] = await withTimeout(
            query,
            timeoutMs,
            ([late]) => late?.granted && giveBack(accountId, month, late.granted)
          )
          if (r.granted > 0) changed(accountId)
          batch.forEach((w, i) =>
            i < r.granted
              ? w.resolve({ accountId, month })
              : w.reject(exceeded(r.quota_limit ?? 0, r.now_used, resetsAt))
          )
        } catch (e) {
          batch.forEach((w) => w.reject(e))
        }
      }
    } finally {
      running.delete(accountId)
    }
  }

  const giveBack = (accountId: string, month: string, n: number) =>
    sql`update quota_usage set used = greatest(0, used - ${n}) where account_id = ${accountId} and month = ${month}`

  const exceeded = (limit: number, used: number, resetsAt: Date) =>
    new ApiError(
      'quota_exceeded',
      `The monthly AI quota of this account is used up; it resets at ${resetsAt.toISOString()}`,
      { limit, used, resets_at: resetsAt.toISOString() },
      { 'retry-after': String(Math.max(1, Math.ceil((resetsAt.getTime() - clock()) / 1000))) }
    )

  return {
    reserve(accountId: string): Promise<Reservation> {
      return new Promise((resolve, reject) => {
        const batch = waiting.get(accountId)
        if (batch) batch.push({ resolve, reject })
        else waiting.set(accountId, [{ resolve, reject }])
        if (!running.has(accountId)) void drain(accountId)
      })
    },

    async release(r: Reservation) {
      await giveBack(r.accountId, r.month, 1)
      changed(r.accountId)
    },

    onChange(fn: (accountId: string) => void) {
      listeners.push(fn)
    },
    now: clock,
    month: () => monthOf(clock()),
    status(plan: string, used: number): QuotaStatus {
      const limit = limitFor(config, plan)
      return {
        limit,
        used,
        remaining: limit === null ? null : Math.max(0, limit - used),
        resets_at: monthOf(clock()).end.toISOString(),
      }
    },
  }
}

export type Quota = ReturnType<typeof createQuota>
