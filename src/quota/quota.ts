import { ApiError } from '../http/errors.js'
import type { Logger } from '../ops/log.js'
import { AccountQuota } from './account-quota.js'
import { IDLE_MS } from './ahead.js'
import type { AccountDeps } from './batch.js'
import { keyQuotaExceeded, quotaExceeded, quotaStatus, type QuotaStatus } from './figures.js'
import { Lease } from './lease.js'
import { monthOf } from './month.js'
import { limitFor, type QuotaLimits } from './plans.js'
import type { QuotaStore, UnitStore } from './store.js'
import { type QuotaTicket, TicketPair } from './ticket-pair.js'
import type { Ticket } from './ticket.js'
import { realTimer, type TickTimer, Ticker } from './ticker.js'

export interface QuotaDeps {
  store: QuotaStore
  // Where the units of keys with a monthly cap of their own are counted (absent: caps are not applied).
  keyStore?: UnitStore
  limits: QuotaLimits
  log: Logger
  // Wall time (months, Retry-After) and monotonic time (leases, rates, idleness); both injectable for tests.
  clock?: () => number
  monotonic?: () => number
  leaseMs: number
  // The timer `run` ticks on (tests pass their own).
  timer?: TickTimer
  timeoutMs?: number
  deadlineError?: () => Error
  // A quota_exceeded or key_quota_exceeded refusal, counted by the metrics.
  onRefused?: (code: 'quota_exceeded' | 'key_quota_exceeded') => void
}

// An account the process has not touched for this long is forgotten (what it knew is asked again).
export const FORGET_MS = 60_000

// The monthly AI quota: one AccountQuota per account this process serves this month, over a store shared by every
// process (src/quota/store.ts). The invariant, kept by the store under each account's row lock: units spent plus units
// held by live processes never exceed the limit, so no account gets more answers than its plan allows, and units a
// dead process held come back once its lease (leaseMs) runs out. `tick` renews the lease, sends the spends of answers
// released far from the limit, and gives back what idle accounts hold ahead; `run` ticks while the process serves an
// account (ticker.ts), and otherwise only when the lease is due.
// A key with a monthly cap of its own is one more AccountQuota (by its prefix, never a uuid) over its own counts in
// the store: its calls hold a unit of the key's and one of the account's (TicketPair).
export class Quota {
  readonly now: () => number
  private readonly monotonic: () => number
  private readonly accounts = new Map<string, AccountQuota>()
  private readonly retired = new Set<AccountQuota>()
  private readonly listeners: ((accountId: string) => void)[] = []
  private readonly pending = new Set<Promise<unknown>>()
  private readonly lease: Lease
  private readonly accountDeps: AccountDeps
  private readonly keyDeps: AccountDeps | null
  private readonly idle: (() => void)[] = []
  private open = 0
  private closing = false
  private ticker: Ticker | null = null

  constructor(private readonly deps: QuotaDeps) {
    this.now = deps.clock ?? Date.now
    this.monotonic = deps.monotonic ?? (() => performance.now())
    this.lease = new Lease(deps.store, deps.leaseMs, this.monotonic, deps.log, () => {
      for (const aq of this.accounts.values()) aq.free = 0
    })
    this.accountDeps = {
      store: deps.store,
      monotonic: this.monotonic,
      timeoutMs: deps.timeoutMs ?? 0,
      deadlineError: deps.deadlineError ?? (() => new Error('quota deadline')),
      leaseFresh: this.lease.fresh,
      exceeded: (limit, used) => {
        deps.onRefused?.('quota_exceeded')
        return quotaExceeded(limit, used, monthOf(this.now()).end, this.now())
      },
      unavailable: () =>
        new ApiError({
          code: 'service_unavailable',
          message: 'The quota could not be checked; try again',
          headers: {
            'retry-after': '2',
          },
        }),
      changed: (accountId) => {
        for (const fn of this.listeners) fn(accountId)
      },
      track: (p) => {
        this.pending.add(p)
        void p.finally(() => this.pending.delete(p))
      },
      undercounted: (n) => deps.log.warn('answers released whose quota units could not be counted', { units: n }),
    }
    const exceeded = (limit: number, used: number) => {
      deps.onRefused?.('key_quota_exceeded')
      return keyQuotaExceeded(limit, used, monthOf(this.now()).end, this.now())
    }
    this.keyDeps = deps.keyStore ? { ...this.accountDeps, store: deps.keyStore, exceeded } : null
  }

  start = () => this.lease.renew()

  // A ticket for one call of the account: its unit reserved (at once when held ahead), then spent or given back.
  // `abort` stops the call when a reservation that ran alongside it is refused. `capped`: the call's key has a
  // monthly cap of its own (its prefix): the key's unit too.
  ticket(accountId: string, abort: () => void): Ticket
  ticket(accountId: string, abort: () => void, capped?: string): QuotaTicket
  ticket(accountId: string, abort: () => void, capped?: string): QuotaTicket {
    if (capped === undefined || !this.keyDeps) return this.unit(this.current(accountId, this.accountDeps), abort)
    const key = this.unit(this.current(capped, this.keyDeps), () => {})
    return new TicketPair(key, () => this.unit(this.current(accountId, this.accountDeps), () => {}))
  }

  private unit(aq: AccountQuota, abort: () => void) {
    this.open++
    const t = aq.ticket(abort)
    t.onEnd = this.ended
    return t
  }

  run(everyMs: number) {
    const busy = () => this.accounts.size > 0 || this.retired.size > 0
    this.ticker = new Ticker(this.tick, busy, this.lease.dueIn, everyMs, this.deps.timer ?? realTimer)
  }

  tick = () => {
    this.lease.tick()
    const now = this.monotonic()
    for (const aq of [...this.accounts.values(), ...this.retired]) {
      aq.flush()
      const quiet = now - aq.rate.lastAt
      if (quiet >= IDLE_MS) aq.returnFree()
      if (aq.idle() && (aq.retired || quiet >= FORGET_MS)) {
        if (this.accounts.get(aq.accountId) === aq) this.accounts.delete(aq.accountId)
        this.retired.delete(aq)
      }
    }
  }

  // Units this process holds ahead for the account this month: counted as held in the store, not spent yet.
  held(accountId: string): number {
    const aq = this.accounts.get(accountId)
    return aq?.month === this.month().month ? aq.free : 0
  }

  // The month's units of the account as its callers see them: spent and held by every live process (the calls
  // under way), less what the store counts for this process that no call has (both before and after the read).
  async used(accountId: string): Promise<number> {
    const { month } = this.month()
    const aq = this.accounts.get(accountId)
    if (aq?.month !== month) {
      const { used, held } = await this.deps.store.read(accountId, month)
      return used + held
    }
    return aq.consistently(async () => {
      const before = aq.aheadInStore()
      const { used, held } = await this.deps.store.read(accountId, month)
      return Math.max(0, used + held - Math.min(before, aq.aheadInStore()))
    })
  }

  // The account changed (its plan, say): what this process holds ahead for it is given back.
  drop = (accountId: string) => this.accounts.get(accountId)?.returnFree()

  onChange(fn: (accountId: string) => void) {
    this.listeners.push(fn)
  }

  month = () => monthOf(this.now())

  status = (plan: string, used: number): QuotaStatus =>
    quotaStatus(limitFor(this.deps.limits, plan), used, this.month().end)

  // Resolves once every ticket has ended, or after `ms` (a close cut short waits this long for aborted calls).
  settled(ms: number): Promise<void> {
    if (this.open === 0) return Promise.resolve()
    return new Promise<void>((ok) => {
      this.idle.push(ok)
      setTimeout(ok, ms).unref()
    })
  }

  // Gives back everything held ahead, sends what is left to send, waits for it, and ends the lease (call before
  // closing the pool). A database that does not answer is waited for at most timeoutMs: what it did not take, the
  // lease's end gives back in time.
  async close() {
    if (this.closing) return
    this.closing = true
    this.ticker?.stop()
    for (const aq of [...this.accounts.values()]) this.retire(aq)
    const drained = this.drain()
    const bound = this.deps.timeoutMs
    if (!bound) return drained
    let timer: NodeJS.Timeout | undefined
    await Promise.race([drained, new Promise((ok) => (timer = setTimeout(ok, bound)))])
    clearTimeout(timer)
  }

  private async drain() {
    for (let round = 0; round < 3; round++) {
      for (const aq of this.retired) aq.flush()
      while (this.pending.size) await Promise.allSettled([...this.pending])
    }
    await this.lease.end()
  }

  // The account's quota for this month; at a new month the last one is retired: what it held ahead goes back to its
  // month, and its calls still under way finish against it.
  private current(accountId: string, deps: AccountDeps): AccountQuota {
    const month = this.month().month
    const aq = this.accounts.get(accountId)
    if (aq?.month === month) return aq
    if (aq) this.retire(aq)
    const fresh = new AccountQuota(accountId, month, deps)
    this.accounts.set(accountId, fresh)
    this.ticker?.wake()
    return fresh
  }

  private retire(aq: AccountQuota) {
    aq.retired = true
    aq.returnFree()
    this.accounts.delete(aq.accountId)
    this.retired.add(aq)
  }

  private ended = () => {
    this.open--
    if (this.open === 0) for (const fn of this.idle.splice(0)) fn()
  }
}

export const createQuota = (deps: QuotaDeps) => new Quota(deps)
