import type { ApiError } from '../http/errors.js'
import type { Change, UnitStore } from './store.js'
import type { Ticket } from './ticket.js'

// What an AccountQuota (an account's, or a capped key's) is given, and what one of its batches carries from its
// sending to its answer.

export interface AccountDeps {
  store: UnitStore
  monotonic: () => number
  // Whether this process's lease is surely alive: only then may answers be released before their spend is counted.
  leaseFresh: () => boolean
  // A batch the store has not answered within timeoutMs (0: no deadline) fails its calls with deadlineError().
  timeoutMs: number
  deadlineError: () => Error
  exceeded: (limit: number, used: number) => ApiError
  unavailable: () => ApiError
  changed: (accountId: string) => void
  track: (p: Promise<unknown>) => void
  undercounted: (n: number) => void
}

// A spend whose answer waits until the store has counted it (near the limit).
export interface StrictSpend {
  ticket: Ticket
  ok: () => void
  fail: (e: unknown) => void
  // Answered already (the deadline passed): if the store counts it after all, it is moved back and given back.
  answered: boolean
}

export interface Batch {
  change: Change
  tickets: Ticket[]
  strict: StrictSpend[]
  givers: (() => void)[]
  far: number
  extra: number
  late: boolean
  generation: number
}
