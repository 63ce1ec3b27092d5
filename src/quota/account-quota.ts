import { CallRate, FLOOR } from './ahead.js'
import type { AccountDeps, Batch, StrictSpend } from './batch.js'
import { Knowledge } from './knowledge.js'
import type { Change, Counted } from './store.js'
import { Ticket, type TicketOwner } from './ticket.js'

// Batches of one account sent before the previous one answered: a batch arriving while one is under way waits in
// PostgreSQL for the row lock (released at that batch's commit), not in this process for its answer.
const BATCHES_IN_FLIGHT = 2

// What one process does with one account's units in one month: its tickets, the units it holds ahead (`free`), and
// the changes it has yet to send, batched into one store call (at most BATCHES_IN_FLIGHT under way). Near the limit
// an answer is released only once its spend is counted (a strict spend); far from it (FLOOR units or more left, and a
// fresh lease) the spend is sent with the next batch, at most one tick later.
export class AccountQuota implements TicketOwner {
  free = 0
  open = 0
  retired = false
  readonly rate: CallRate
  readonly knowledge = new Knowledge()
  private waiting: Ticket[] = []
  private givers: (() => void)[] = []
  private strict: StrictSpend[] = []
  private far = 0
  private giveBacks = 0
  private unspends = 0
  private inFlight = 0
  private asked = 0
  private refill = false
  private generation = 0
  private reading = 0
  private batches = new Map<Batch, Promise<unknown>>()

  constructor(
    readonly accountId: string,
    readonly month: string,
    private readonly deps: AccountDeps
  ) {
    this.rate = new CallRate(deps.monotonic())
  }

  ticket(onRefusal: () => void): Ticket {
    const now = this.deps.monotonic()
    this.rate.count(now)
    this.open++
    const t = new Ticket(this, this.knowledge.roomAlongside(this.open, now), onRefusal)
    if (this.free > 0) {
      this.free--
      t.commit()
      this.deps.changed(this.accountId)
      if (this.free * 2 < this.target() && this.wanted() > 0) {
        this.refill = true
        this.pump()
      }
    } else {
      this.waiting.push(t)
      this.pump()
    }
    return t
  }

  spend(ticket: Ticket): Promise<void> {
    if (this.knowledge.left() >= FLOOR && this.deps.leaseFresh()) {
      this.far++
      return Promise.resolve()
    }
    return new Promise((ok, fail) => {
      this.strict.push({ ticket, ok, fail, answered: false })
      this.pump()
    })
  }

  // Back into what is held ahead while the account holds units ahead; else to the store, resolving once it is sent
  // and answered (the caller's next request sees it).
  giveBack(_ticket: Ticket): Promise<void> {
    this.deps.changed(this.accountId)
    if (!this.retired && this.target() > 0) {
      this.free++
      return Promise.resolve()
    }
    this.giveBacks++
    return new Promise((ok) => {
      this.givers.push(ok)
      this.pump()
    })
  }

  ended(_ticket: Ticket) {
    this.open--
  }

  // Gives back what is held ahead (the calls stopped, the account changed, the month or the process ended); units
  // that batches already under way bring back go back too.
  returnFree() {
    this.generation++
    this.refill = false
    if (!this.free) return
    this.giveBacks += this.free
    this.free = 0
    this.deps.changed(this.accountId)
    this.pump()
  }

  // Sends the spends of answers already released, and what a failed batch left to send again (at each tick).
  flush() {
    this.pump(true)
  }

  // Units the store counts for this process that no call under way has: held ahead, given back but not yet sent, and
  // spends of answers withheld after all, not yet taken back.
  aheadInStore = () => this.free + this.giveBacks + this.unspends

  // `read` of the store, made consistent with aheadInStore: it waits for the batches under way and, until it ends,
  // asks the store for nothing more to hold ahead and sends none of it back (a late batch is not waited for).
  async consistently<T>(read: () => Promise<T>): Promise<T> {
    this.reading++
    try {
      await Promise.all(this.batches.values())
      return await read()
    } finally {
      this.reading--
      this.pump()
    }
  }

  // Nothing left to do, nothing under way: the engine may forget the account.
  idle(): boolean {
    return !this.open && !this.inFlight && !this.free && !this.reading && !this.pendingWork(true)
  }

  private target = () => (this.retired ? 0 : this.rate.target(this.knowledge.known(), this.deps.monotonic()))
  private wanted = () => (this.reading ? 0 : Math.max(0, this.target() - this.free - this.asked))
  // Work that waits while a read is under way (see consistently).
  private afterRead = () => !this.reading && (this.giveBacks || this.unspends || this.refill)
  private pendingWork = (withFar: boolean) =>
    this.waiting.length || this.strict.length || this.afterRead() || (withFar && this.far)

  private pump(withFar = false) {
    while (this.inFlight < BATCHES_IN_FLIGHT && this.pendingWork(withFar)) {
      withFar = false
      this.send()
    }
  }

  private send() {
    const tickets = this.waiting.splice(0)
    const strict = this.strict.splice(0)
    const extra = this.refill || tickets.length ? this.wanted() : 0
    const [back, unspend] = this.reading ? [0, 0] : [this.giveBacks, this.unspends]
    const spend = this.far + strict.length
    const change: Change = { unspend, giveBack: back + unspend, spend, reserve: tickets.length + extra }
    const givers = this.reading ? [] : this.givers.splice(0)
    const generation = this.generation
    const batch: Batch = { change, tickets, strict, givers, far: this.far, extra, late: false, generation }
    this.far = 0
    this.giveBacks -= back
    this.unspends -= unspend
    if (!this.reading) this.refill = false
    this.asked += extra
    this.inFlight++
    const timer = this.deps.timeoutMs ? setTimeout(() => this.overdue(batch), this.deps.timeoutMs) : undefined
    const result = this.deps.store.apply(this.accountId, this.month, change).then(
      (counted) => {
        clearTimeout(timer)
        this.answered(counted, batch)
      },
      (e: unknown) => {
        clearTimeout(timer)
        this.failed(e, batch)
      }
    )
    this.deps.track(result)
    this.batches.set(batch, result)
    void result.finally(() => this.batches.delete(batch))
  }

  // The database has not answered in time: the batch's calls are answered 503 now; what it did, when it answers,
  // is taken back (units granted or spent for them) or redone (spends of answers already released).
  private overdue(batch: Batch) {
    batch.late = true
    this.inFlight--
    this.batches.delete(batch)
    const e = this.deps.deadlineError()
    for (const t of batch.tickets) t.refuse(e)
    for (const s of batch.strict) {
      s.answered = true
      s.ticket.uncounted(e)
      s.fail(e)
    }
    this.pump()
  }

  private answered(counted: Counted, batch: Batch) {
    this.settle(batch)
    this.knowledge.learn(counted, batch.change, this.deps.monotonic())
    const farCounted = Math.min(batch.far, counted.spent)
    if (farCounted < batch.far) this.deps.undercounted(batch.far - farCounted)
    batch.strict.forEach((s, i) => {
      const counts = farCounted + i < counted.spent
      if (s.answered) {
        if (counts) this.unspends++
      } else if (counts) s.ok()
      else {
        const e = this.deps.exceeded(counted.limit ?? 0, counted.used)
        s.ticket.uncounted(e)
        s.fail(e)
      }
    })
    let spare = counted.granted
    // Each refusal made (and counted in the metrics) for its own call, only when there is one.
    if (!batch.late)
      for (const t of batch.tickets) {
        if (spare > 0) {
          spare--
          t.commit()
        } else if (counted.alive) t.refuse(this.deps.exceeded(counted.limit ?? 0, counted.used + counted.held))
        else t.refuse(this.deps.unavailable())
      }
    if (batch.generation === this.generation && this.target() > 0) this.free += spare
    else this.giveBacks += spare
    if (counted.granted) this.deps.changed(this.accountId)
    this.pump()
  }

  // Nothing of the batch happened: its spends and give-backs are sent again at the next tick.
  private failed(e: unknown, batch: Batch) {
    this.settle(batch)
    this.far += batch.far
    this.giveBacks += batch.change.giveBack - batch.change.unspend
    this.unspends += batch.change.unspend
    for (const s of batch.strict) {
      this.giveBacks++
      if (!s.answered) {
        s.ticket.uncounted(e)
        s.fail(e)
      }
    }
    if (!batch.late) for (const t of batch.tickets) t.refuse(e)
  }

  private settle(batch: Batch) {
    for (const ok of batch.givers) ok()
    this.asked -= batch.extra
    if (!batch.late) this.inFlight--
  }
}
