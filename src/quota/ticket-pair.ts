import type { Ticket, TicketState } from './ticket.js'

// What a completion holds of the quota: one Ticket (its account's unit), or a TicketPair (a key with a monthly cap of
// its own: the key's unit and its account's).
export interface QuotaTicket {
  readonly overlapped: boolean
  readonly state: TicketState
  readonly refusal: unknown
  decision(): Promise<unknown>
  committed(): Promise<void>
  spend(): Promise<void>
  giveBack(): Promise<void>
}

// The two units of a capped key's call. The key's is reserved first and the account's only once the key's is granted,
// so that calls the key's cap refuses never hold the account's units (which would refuse calls within both); a
// refusal of either gives the other back. Never overlapped: the call waits for both before it goes upstream. The
// answer is released once both are spent; one counted while the other could not be (a lapsed lease, a database
// deadline) stays counted: the answer is withheld, and a unit counted without an answer is the safe side.
export class TicketPair implements QuotaTicket {
  readonly overlapped = false
  private account: Ticket | null = null
  private readonly decided: Promise<unknown>

  constructor(
    private readonly key: Ticket,
    accountTicket: () => Ticket
  ) {
    this.decided = key.decision().then(async (refusal) => {
      if (refusal) return refusal
      const account = (this.account = accountTicket())
      const refused = await account.decision()
      if (refused) await key.giveBack()
      return refused
    })
  }

  private refused = () => (this.key.state === 'refused' ? this.key : this.account)

  get state(): TicketState {
    const refused = this.refused()
    return refused?.state === 'refused' ? 'refused' : (this.account?.state ?? this.key.state)
  }

  get refusal(): unknown {
    return this.refused()?.refusal ?? null
  }

  decision = () => this.decided

  async committed() {
    const refusal = await this.decided
    if (refusal) throw refusal
  }

  async spend() {
    await this.committed()
    const [key, account] = await Promise.allSettled([this.key.spend(), (this.account as Ticket).spend()])
    if (key.status === 'rejected') throw key.reason
    if (account.status === 'rejected') throw account.reason
  }

  async giveBack() {
    await this.decided
    await Promise.all([this.key.giveBack(), this.account?.giveBack()])
  }
}
