// Where quota units are counted, shared by every process of the service. `used` counts units spent (answers
// released); each process also holds units it has reserved and not yet spent or given back, counted against the
// limit for as long as its lease lives. PostgreSQL is the one implementation (postgres-store.ts); a key with a
// monthly cap of its own has its units counted the same way, beside its account's.

export interface Change {
  // Units moved back from spent into this process's hold (answers withheld after all), units given back from the
  // hold, then units spent from it, then units asked for into it.
  unspend: number
  giveBack: number
  spend: number
  reserve: number
}

export interface Counted {
  granted: number
  // Units spent: all of `spend`, unless the hold no longer had them (a lapsed lease) and the limit left no room.
  spent: number
  // After the change: units spent this month, and units held by every live process (this one's included).
  used: number
  held: number
  limit: number | null
  // False while this process's lease has lapsed: nothing is granted until it is renewed.
  alive: boolean
}

// Where one subject's units are changed: an account's (QuotaStore), or a key's with a monthly cap of its own (the key's
// counts, beside its account's, under the same leases).
export interface UnitStore {
  apply(id: string, month: string, change: Change): Promise<Counted>
}

export interface QuotaStore extends UnitStore {
  read(accountId: string, month: string): Promise<{ used: number; held: number }>
  // Renews this process's lease; true when it had lapsed (another process may have dropped its holds).
  renew(): Promise<boolean>
  // Ends the lease, dropping whatever this process still holds.
  end(): Promise<void>
}
