// The quota unit of one completion call, from its reservation to its end. Its state moves only forward:
//
//   reserving ─┬─> committed ─┬─> spent       (the answer was released; the unit is counted)
//              │              └─> given-back  (the call failed; the unit goes back)
//              └─> refused                    (no unit: quota_exceeded, or the database failed)
//
// and a committed unit whose spend the store could not count (its hold lost with a lapsed lease, no room left) ends
// refused too. Each transition asserts the state it leaves, so a unit can never be spent or given back twice.
export type TicketState = 'reserving' | 'committed' | 'refused' | 'given-back' | 'spent'

export interface TicketOwner {
  // The account's engine counts the spend: resolves once it is counted when `proof` is asked, else at once.
  spend(ticket: Ticket): Promise<void>
  giveBack(ticket: Ticket): Promise<void>
  ended(ticket: Ticket): void
}

export class Ticket {
  state: TicketState = 'reserving'
  refusal: unknown = null
  // Called once, when the ticket ends (refused, spent or given back).
  onEnd: () => void = () => {}
  private readonly decided: Promise<void>
  private decide!: () => void

  constructor(
    private readonly owner: TicketOwner,
    // The reservation runs alongside the upstream call (Knowledge.roomAlongside); `onRefusal` aborts that call.
    readonly overlapped: boolean,
    private readonly onRefusal: () => void
  ) {
    this.decided = new Promise((ok) => {
      this.decide = ok
    })
  }

  private move(from: TicketState, to: TicketState) {
    if (this.state !== from) throw new Error(`quota ticket: ${to} while ${this.state} (expected ${from})`)
    this.state = to
  }

  commit() {
    this.move('reserving', 'committed')
    this.decide()
  }

  refuse(e: unknown) {
    this.move('reserving', 'refused')
    this.refusal = e
    this.decide()
    if (this.overlapped) this.onRefusal()
    this.end()
  }

  private end() {
    this.owner.ended(this)
    this.onEnd()
  }

  // The reservation's refusal once it is decided, or null when the unit was granted.
  async decision(): Promise<unknown> {
    await this.decided
    return this.state === 'refused' ? this.refusal : null
  }

  // Resolves once the unit is committed; throws the refusal.
  async committed(): Promise<void> {
    await this.decided
    if (this.state === 'refused') throw this.refusal
  }

  // The answer may be released once this resolves: the unit is (or, far from the limit, will be) counted.
  async spend(): Promise<void> {
    await this.committed()
    this.move('committed', 'spent')
    try {
      await this.owner.spend(this)
    } finally {
      this.end()
    }
  }

  // A call that failed: its unit goes back once the reservation is decided (a refused one had none).
  async giveBack(): Promise<void> {
    await this.decided
    if (this.state !== 'committed') return
    this.move('committed', 'given-back')
    const sent = this.owner.giveBack(this)
    this.end()
    await sent
  }

  // The spend could not be counted: the answer is withheld.
  uncounted(e: unknown) {
    this.move('spent', 'refused')
    this.refusal = e
  }
}
