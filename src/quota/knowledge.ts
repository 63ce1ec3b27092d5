import { FLOOR } from './ahead.js'
import type { Change, Counted } from './store.js'

// Trust what the counts say for this long after another process was seen spending the account's units.
const FOREIGN_MS = 10_000
// Overlap only with a wide margin: the count is this process's view, and calls of other processes (or more of this
// one's arriving in a burst) spend the same units.
const MARGIN = 4

// What this process knows of an account's units this month, from the store's answers to its own batches: units left
// (under the limit, less what is spent and held by every process), and whether that can be trusted to decide that a
// call's reservation may run alongside it. It is trusted from the second answer to a reservation on, unless the count
// moved between two answers by more than this process's own batches explain (another process spent units), for
// FOREIGN_MS.
export class Knowledge {
  private answers = 0
  private total = 0
  private leftUnits = 0
  private foreignAt = Number.NEGATIVE_INFINITY

  // Answers come in the order their batches took the row lock, nearly always: one out of order only makes this
  // process distrust the count for a while, which is the safe side.
  learn(counted: Counted, change: Change, now: number) {
    const total = counted.used + counted.held
    const before = total - counted.granted + change.giveBack
    if (this.answers > 0 && before !== this.total) this.foreignAt = now
    if (change.reserve > 0 || !this.answers) this.answers++
    this.total = total
    this.leftUnits = counted.limit === null ? Number.POSITIVE_INFINITY : Math.max(0, counted.limit - total)
  }

  // Units left after the last answer, trusted or not (undefined before any answer).
  known(): number | undefined {
    return this.answers ? this.leftUnits : undefined
  }

  left(): number {
    return this.answers ? this.leftUnits : 0
  }

  // Units left when trusted (Infinity when unlimited), else undefined.
  private unitsLeft(now: number): number | undefined {
    if (!this.answers) return undefined
    if (this.leftUnits === Number.POSITIVE_INFINITY) return this.leftUnits
    return this.answers > 1 && now - this.foreignAt > FOREIGN_MS ? this.leftUnits : undefined
  }

  // Whether the reservations of `open` calls of this process may run alongside their upstream calls: only far from
  // the limit (FLOOR units or more left, trusted), with MARGIN units per call. Nearer, a burst of another process's
  // calls can take what is left between two answers here, and a refusal would come after the upstream call began:
  // tokens paid for an answer nobody gets.
  roomAlongside(open: number, now: number): boolean {
    const left = this.unitsLeft(now)
    return left !== undefined && left >= FLOOR && left > MARGIN * open
  }
}
