import type { Logger } from '../ops/log.js'
import type { QuotaStore } from './store.js'

// This process's lease in the store: renewed every third of leaseMs. Until a renewal confirms it, or once half a lease
// has passed since, it may have lapsed, and answers wait for their spends to be counted (AccountQuota.spend).
export class Lease {
  private renewedAt = Number.NEGATIVE_INFINITY
  private renewing: Promise<void> | null = null

  constructor(
    private readonly store: QuotaStore,
    private readonly leaseMs: number,
    private readonly monotonic: () => number,
    private readonly log: Logger,
    // The lease had lapsed: the store may have dropped what this process held.
    private readonly onLapsed: () => void
  ) {}

  fresh = () => this.monotonic() - this.renewedAt < this.leaseMs / 2

  // How long until a renewal is due: 0 when it is, or one is under way (or the last one failed: it is tried again).
  dueIn = () => (this.renewing ? 0 : Math.max(0, this.leaseMs / 3 - (this.monotonic() - this.renewedAt)))

  async renew() {
    const started = this.monotonic()
    try {
      const lapsed = await this.store.renew()
      if (lapsed && this.renewedAt !== Number.NEGATIVE_INFINITY) {
        this.log.warn('the quota lease had lapsed: units held ahead are dropped')
        this.onLapsed()
      }
      this.renewedAt = started
    } catch (e) {
      this.log.warn('the quota lease could not be renewed', { err: String((e as Error).message) })
    }
  }

  // Renews when a third of the lease has passed and no renewal is under way.
  tick() {
    if (this.renewing || this.monotonic() - this.renewedAt < this.leaseMs / 3) return
    this.renewing = this.renew().finally(() => {
      this.renewing = null
    })
  }

  async end() {
    await this.renewing
    await this.store.end().catch((e) => this.log.warn('the quota lease could not be ended', { err: String(e) }))
  }
}
