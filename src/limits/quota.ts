import type { Config } from '../ops/config.js'
import { withTimeout, type Sql } from '../storage/db.js'
import { ApiError } from '../http/errors.js'
import { type Hold, IDLE_MS, newHold, take, target } from './holds.js'
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
// it granted are given back (withTimeout's onLate), so a slow database never charges for completions not made.

interface Waiter {
  resolve: (r: Reservation) => void
  reject: (e: unknown) => void
}

// Batches of one account sent before the previous one answered: a request arriving while a batch is under way has its
// query wait in PostgreSQL for the row lock (released at that batch's commit), not in this process for its answer.
const BATCHES_IN_FLIGHT = 2

// What this process knows of an account's units this month, from its own reservations' answers.
interface Known {
  month: string
  left: number
  used: number
  trusted: boolean
  foreignAt: number
}
const FOREIGN_MS = 10_000

// The monthly AI quota lives in PostgreSQL. A unit is reserved for each call and given back if the call fails.
// Concurrent reservations of one account in this process are batched into one call of studio_quota_reserve, which
// grants at most what is left under the limit of the account's current plan while holding the row lock: exact across
// concurrent requests and across processes, one round trip per batch. Each answer also tells this process how many
// units the account had left (`unitsLeft`), which lets completions decide whether to wait for the reservation first.
// A busy account's batches also reserve units ahead for the calls to come (holds.ts), which then take a committed unit
// without a round trip.
export function createQuota(sql: Sql, config: QuotaLimits, clock: () => number = Date.now, timeoutMs = 0) {
  const limits = limitsByPlan(config)
  const waiting = new Map<string, Waiter[]>()
  // Per account: units reserved ahead (holds.ts).
  const holds = new Map<string, Hold>()
  // Per account: units given back whose update has not committed yet, and units given back since the last answer or
  // under way at it (`slack`): an answer may count them or not (see learn).
  const returning = new Map<string, number>()
  const slack = new Map<string, number>()
  let closing = false
  const inFlight = new Map<string, number>()
  const known = new Map<string, Known>()
  const listeners: ((accountId: string) => void)[] = []
  const changed = (accountId: string) => listeners.forEach((fn) => fn(accountId))
  const pending = new Set<Promise<unknown>>()
  const track = <T>(p: Promise<T>) => (pending.add(p), p.finally(() => pending.delete(p)).catch(() => {}), p)

  function pump(accountId: string) {
    const running = inFlight.get(accountId) ?? 0
    const batch = waiting.get(accountId)
    if (!batch || running >= BATCHES_IN_FLIGHT) return
    waiting.delete(accountId)
    inFlight.set(accountId, running + 1)
    void track(send(accountId, batch)).finally(() => {
      const left = inFlight.get(accountId)! - 1
      if (left) inFlight.set(accountId, left)
      else inFlight.delete(accountId)
      pump(accountId)
    })
  }

  // What this answer says of the units left. Another process spending the account's units since this one's previous
  // answer (its count moved by more than what this process did) makes the count untrusted for FOREIGN_MS. This
  // process's own give-backs still under way may or may not be in the answer.
  function learn(
    accountId: string,
    month: string,
    r: { granted: number; now_used: number; quota_limit: number | null }
  ) {
    const prev = known.get(accountId)
    const seen = prev?.month === month
    const before = r.now_used - r.granted
    const tolerance = slack.get(accountId) ?? 0
    const foreign = seen && Math.abs(before - prev.used) > tolerance
    if (returning.has(accountId)) slack.set(accountId, returning.get(accountId)!)
    else slack.delete(accountId)
    known.set(accountId, {
      month,
      left: r.quota_limit === null ? Infinity : Math.max(0, r.quota_limit - r.now_used),
      used: r.now_used,
      trusted: seen && !foreign,
      foreignAt: foreign ? clock() : seen ? prev.foreignAt : Number.NEGATIVE_INFINITY,
    })
  }

  async function send(accountId: string, batch: Waiter[]) {
    const { month, end: resetsAt } = monthOf(clock())
    const hold = holds.get(accountId)
    const extra = hold?.month === month ? wanted(accountId, hold) : 0
    if (batch.length + extra === 0) return
    if (hold) hold.asked += extra
    try {
      const query = sql<{ granted: number; now_used: number; quota_limit: number | null }[]>`
        select * from studio_quota_reserve(${accountId}, ${month}, ${batch.length + extra}, ${sql.json(limits)})`
      const [r] = await withTimeout(
        track(query),
        timeoutMs,
        ([late]) => late?.granted && track(Promise.resolve(update(accountId, month, late.granted)))
      )
      learn(accountId, month, r)
      if (r.granted > 0) changed(accountId)
      const spare = r.granted - batch.length
      // Near the limit now (or closing, or the hold dropped meanwhile): nothing is held, the spare goes back too.
      const keep =
        !closing && hold && holds.get(accountId) === hold && target(hold, leftKnown(accountId), performance.now()) > 0
      if (keep) hold.units += Math.max(0, spare)
      else if (hold) returnHold(accountId, hold)
      if (spare > 0 && !keep) void giveBack(accountId, month, spare)
      batch.forEach((w, i) =>
        i < r.granted ? w.resolve({ accountId, month }) : w.reject(exceeded(r.quota_limit ?? 0, r.now_used, resetsAt))
      )
    } catch (e) {
      batch.forEach((w) => w.reject(e))
    } finally {
      if (hold) hold.asked -= extra
    }
  }

  // Units worth reserving ahead for the account now: up to its target, less what is held and already asked for.
  const wanted = (accountId: string, h: Hold) =>
    closing ? 0 : Math.max(0, target(h, leftKnown(accountId), performance.now()) - h.units - h.asked)

  // Units left after this process's last answer this month, trusted or not: holds are bounded by a share of it and
  // stop under FLOOR, whoever else spends the account's units (the database keeps every grant exact).
  function leftKnown(accountId: string): number | undefined {
    const k = known.get(accountId)
    return k?.month === monthOf(clock()).month ? k.left : undefined
  }

  // Gives what the account's hold has left back to the database (its plan changed, its calls stopped, the month or
  // the process ended); an error leaves the units counted, never spent twice.
  function returnHold(accountId: string, h: Hold) {
    const n = h.units
    h.units = 0
    if (n) void giveBack(accountId, h.month, n)
  }

  // The hold of the account for this month (a new one at a new month, the old one's units given back), counting the
  // call; true when the call took a held unit.
  function takeHeld(accountId: string, month: string): boolean {
    if (closing) return false
    const now = performance.now()
    let h = holds.get(accountId)
    if (h && h.month !== month) returnHold(accountId, h), (h = undefined)
    if (!h) holds.set(accountId, (h = newHold(month, now)))
    const took = take(h, now)
    // Running low: a batch of no calls fetches more (when nothing was held, the call's own batch asks for them).
    if (took && h.units * 2 < target(h, leftKnown(accountId), now) && wanted(accountId, h) > 0) {
      if (!waiting.has(accountId)) waiting.set(accountId, [])
      pump(accountId)
    }
    return took
  }

  const sweeper = setInterval(() => {
    const now = performance.now()
    for (const [accountId, h] of holds) {
      if (now - h.lastTakeAt < IDLE_MS) continue
      returnHold(accountId, h)
      if (!h.asked) holds.delete(accountId)
    }
  }, IDLE_MS / 2).unref()

  const update = (accountId: string, month: string, n: number) =>
    sql`update quota_usage set used = greatest(0, used - ${n}) where account_id = ${accountId} and month = ${month}`

  // Gives `n` units the account was granted back to the database; what this process knows moves at once.
  function giveBack(accountId: string, month: string, n: number): Promise<unknown> {
    const k = known.get(accountId)
    if (k?.month === month) (k.left += n), (k.used -= n)
    returning.set(accountId, (returning.get(accountId) ?? 0) + n)
    slack.set(accountId, (slack.get(accountId) ?? 0) + n)
    changed(accountId)
    return track(update(accountId, month, n)).finally(() => {
      const left = returning.get(accountId)! - n
      if (left) returning.set(accountId, left)
      else returning.delete(accountId)
    })
  }

  const exceeded = (limit: number, used: number, resetsAt: Date) =>
    new ApiError(
      'quota_exceeded',
      `The monthly AI quota of this account is used up; it resets at ${resetsAt.toISOString()}`,
      { limit, used, resets_at: resetsAt.toISOString() },
      { 'retry-after': String(Math.max(1, Math.ceil((resetsAt.getTime() - clock()) / 1000))) }
    )

  function unitsLeft(accountId: string): number | undefined {
    const k = known.get(accountId)
    const now = clock()
    if (!k || k.month !== monthOf(now).month) return undefined
    if (k.left === Infinity) return k.left
    return k.trusted && now - k.foreignAt > FOREIGN_MS ? k.left : undefined
  }

  return {
    reserve(accountId: string): Promise<Reservation> {
      const month = monthOf(clock()).month
      if (takeHeld(accountId, month)) {
        changed(accountId)
        return Promise.resolve({ accountId, month })
      }
      return new Promise((resolve, reject) => {
        const batch = waiting.get(accountId)
        if (batch) batch.push({ resolve, reject })
        else waiting.set(accountId, [{ resolve, reject }])
        pump(accountId)
      })
    },

    // A unit of a call that failed: back into the account's hold while it holds units ahead, else to the database.
    async release(r: Reservation) {
      const h = holds.get(r.accountId)
      if (!closing && h?.month === r.month && target(h, leftKnown(r.accountId), performance.now()) > 0) {
        h.units++
        return changed(r.accountId)
      }
      await giveBack(r.accountId, r.month, 1)
    },

    // Units the account had left after the last reservation this process made for it this month (Infinity when
    // unlimited), or undefined when this process does not know or cannot trust it: before its second answer for the
    // account this month, and for FOREIGN_MS after another process was seen spending the account's units.
    unitsLeft,

    // Units this process holds ahead for the account this month: counted as used in the database, not spent yet.
    held(accountId: string): number {
      const h = holds.get(accountId)
      return h?.month === monthOf(clock()).month ? h.units : 0
    },

    // The account changed (its plan, say): what this process holds for it is given back.
    drop(accountId: string) {
      const h = holds.get(accountId)
      if (h) returnHold(accountId, h), holds.delete(accountId)
    },

    // Gives back every hold, then waits for reservations under way and the give-backs of late commits (call before
    // closing the pool).
    async close() {
      clearInterval(sweeper)
      closing = true
      for (const [accountId, h] of holds) returnHold(accountId, h)
      holds.clear()
      while (pending.size) await Promise.allSettled([...pending])
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
