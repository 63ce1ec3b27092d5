import type { Change, Counted, QuotaStore } from '../../src/quota/store.js'

// The quota store's semantics (sql/010) in memory, for the quota's model test: one MemoryQuotaDatabase shared by the
// processes of a run, its time a number the test moves, and each store call held until the test commits or fails
// it, so that the test chooses the order in which the database answers. test/quota/store.test.ts runs the same cases
// over this and over PostgreSQL, so that the two cannot drift.

export interface Faults {
  // A planted bug: give-backs are applied twice.
  giveBackTwice?: boolean
  // A planted bug: the units other processes hold are not counted against the limit.
  ignoreOthers?: boolean
}

export interface PendingOp {
  process: string
  commit(): void
  fail(): void
}

export class MemoryQuotaDatabase {
  now = 0
  readonly plans = new Map<string, string>()
  readonly used = new Map<string, number>()
  readonly holds = new Map<string, Map<string, number>>()
  readonly leases = new Map<string, number>()
  readonly pending: PendingOp[] = []
  // Processes whose holds were dropped while they lived on (their lease lapsed).
  readonly lapsed = new Set<string>()

  constructor(
    readonly limits: Record<string, number | null>,
    readonly faults: Faults = {}
  ) {}

  limitOf(accountId: string): number | null {
    const plan = this.plans.get(accountId) ?? 'ENTERPRISE'
    return plan in this.limits ? this.limits[plan] : this.limits.ENTERPRISE
  }

  alive = (process: string) => (this.leases.get(process) ?? Number.NEGATIVE_INFINITY) > this.now

  // The live holds of an account's month, by process, after dropping those of dead processes.
  liveHolds(key: string): Map<string, number> {
    const holds = this.holds.get(key) ?? new Map<string, number>()
    for (const p of [...holds.keys()]) {
      if (this.alive(p)) continue
      holds.delete(p)
      this.lapsed.add(p)
    }
    this.holds.set(key, holds)
    return holds
  }

  apply(accountId: string, month: string, process: string, c: Change): Counted {
    if (!this.plans.has(accountId)) return { granted: 0, spent: 0, used: 0, held: 0, limit: 0, alive: true }
    const key = `${accountId}|${month}`
    const limit = this.limitOf(accountId)
    let used = this.used.get(key) ?? 0
    const alive = this.alive(process)
    const holds = this.liveHolds(key)
    let mine = holds.get(process) ?? 0
    const others = this.faults.ignoreOthers ? 0 : [...holds.values()].reduce((a, b) => a + b, 0) - mine
    used -= c.unspend
    mine = Math.max(0, mine + c.unspend - c.giveBack * (this.faults.giveBackTwice ? 2 : 1))
    const fromHold = Math.min(c.spend, mine)
    const room = (n: number) => (limit === null ? n : Math.min(n, Math.max(0, limit - used - others - mine)))
    const spent = fromHold + room(c.spend - fromHold)
    mine -= fromHold
    used += spent
    const granted = alive ? room(c.reserve) : 0
    mine += granted
    if (mine > 0) holds.set(process, mine)
    else holds.delete(process)
    this.used.set(key, used)
    return { granted, spent, used, held: others + mine, limit, alive }
  }

  read(accountId: string, month: string) {
    const key = `${accountId}|${month}`
    const held = [...(this.holds.get(key)?.entries() ?? [])]
      .filter(([p]) => this.alive(p))
      .reduce((a, [, n]) => a + n, 0)
    return { used: this.used.get(key) ?? 0, held }
  }

  // A store of one process; `held` makes every call wait in `pending` for the test to commit or fail it.
  store(process: string, leaseMs: number, held = true): QuotaStore {
    const call = <T>(run: () => T): Promise<T> =>
      held
        ? new Promise<T>((ok, fail) => {
            this.pending.push({
              process,
              commit: () => ok(run()),
              fail: () => fail(Object.assign(new Error('connection lost'), { code: 'CONNECTION_CLOSED' })),
            })
          })
        : Promise.resolve().then(run)
    return {
      apply: (accountId, month, change) => call(() => this.apply(accountId, month, process, change)),
      read: (accountId, month) => call(() => this.read(accountId, month)),
      renew: () =>
        call(() => {
          const lapsed = !this.alive(process)
          if (lapsed) {
            for (const holds of this.holds.values()) if (holds.delete(process)) this.lapsed.add(process)
          }
          this.leases.set(process, this.now + leaseMs)
          return lapsed
        }),
      end: () =>
        call(() => {
          for (const holds of this.holds.values()) holds.delete(process)
          this.leases.delete(process)
        }),
    }
  }
}
