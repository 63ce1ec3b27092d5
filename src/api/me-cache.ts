const MAX_ENTRIES = 100_000

interface Entry {
  until: number
  monthEnds: number
  json: string
}

// GET /me's answers per account and user, each with when it stops being fresh: a time (performance.now()) and the
// end of its quota month (the quota's clock). An account's entries are dropped together; past MAX_ENTRIES, all are.
export class MeCache {
  private readonly accounts = new Map<string, Map<string, Entry>>()
  private size = 0

  get(accountId: string, who: string): Entry | undefined {
    return this.accounts.get(accountId)?.get(who)
  }

  set(accountId: string, who: string, entry: Entry) {
    if (this.size >= MAX_ENTRIES) {
      this.accounts.clear()
      this.size = 0
    }
    let entries = this.accounts.get(accountId)
    if (!entries) this.accounts.set(accountId, (entries = new Map()))
    if (!entries.has(who)) this.size++
    entries.set(who, entry)
  }

  drop(accountId: string) {
    const entries = this.accounts.get(accountId)
    if (entries) {
      this.size -= entries.size
      this.accounts.delete(accountId)
    }
  }
}
