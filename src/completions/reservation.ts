import { ApiError } from '../http/errors.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/metrics.js'
import type { Quota, Reservation } from '../limits/quota.js'

// The quota unit of one completion call. When this process knows (and trusts, see Quota.unitsLeft) that the account
// has many more units left than it has calls in flight, the reservation runs alongside the upstream call
// (`overlapped`): the answer still waits for its commit, and a refusal aborts the upstream call. Otherwise (close to
// the limit, or not known yet) the call waits for the reservation before it starts, so refusals cost no upstream
// tokens in the common case.
export interface Ticket {
  overlapped: boolean
  // Resolves once the unit is committed; throws the refusal (quota_exceeded, or the database's failure).
  committed(): Promise<Reservation>
  // The refusal, once the reservation has settled, or null when the unit was granted.
  refusal(): Promise<unknown>
  // True once a refusal has aborted the (overlapped) upstream call.
  abortedByRefusal(): boolean
  // Gives the unit back if it was granted (a failed call); never throws.
  giveBack(): Promise<void>
  // Call when the request is over: the account has one call fewer in flight.
  done(): void
}

const settledWith = (e: unknown) => ({ reservation: null, error: e })

// Overlap only with a wide margin: the count is this process's view, and calls of other processes (or more of this
// one's arriving in a burst) spend the same units.
const MARGIN = 4

export type Tickets = ReturnType<typeof createTickets>

export function createTickets(quota: Quota, log: Logger, metrics?: Metrics) {
  const calls = new Map<string, number>()
  let open = 0
  const idle: (() => void)[] = []
  function ticket(accountId: string, abort: () => void): Ticket {
    const inFlight = (calls.get(accountId) ?? 0) + 1
    calls.set(accountId, inFlight)
    const left = quota.unitsLeft(accountId)
    const overlapped = left !== undefined && left > MARGIN * inFlight
    let aborted = false
    const settled = quota.reserve(accountId).then(
      (reservation) => ({ reservation, error: null as unknown }),
      (e: unknown) => {
        if (e instanceof ApiError && e.code === 'quota_exceeded') metrics?.refused('quota_exceeded')
        if (overlapped) (aborted = true), abort()
        return settledWith(e)
      }
    )
    let ended = false
    open++
    return {
      overlapped,
      async committed() {
        const s = await settled
        if (s.reservation) return s.reservation
        throw s.error
      },
      refusal: async () => (await settled).error,
      abortedByRefusal: () => aborted,
      async giveBack() {
        const { reservation } = await settled
        if (reservation)
          await quota
            .release(reservation)
            .catch((e) => log.error('quota unit not given back', { account: accountId }, e))
      },
      done() {
        if (ended) return
        ended = true
        const n = calls.get(accountId)! - 1
        if (n) calls.set(accountId, n)
        else calls.delete(accountId)
        if (--open === 0) for (const fn of idle.splice(0)) fn()
      },
    }
  }
  // Resolves once every ticket is done (its unit given back or kept), or after `ms`: a close cut short by
  // STUDIO_SHUTDOWN_TIMEOUT_MS waits this long for the calls it aborted before the pool closes.
  const settled = (ms: number) =>
    open === 0 ? Promise.resolve() : new Promise<void>((ok) => (idle.push(ok), setTimeout(ok, ms).unref()))
  return Object.assign(ticket, { settled })
}

// The completions table's outcome for a call whose reservation was refused while the call was under way.
export const refusedOutcome = (e: unknown) =>
  e instanceof ApiError && e.code === 'quota_exceeded' ? 'quota_exceeded' : 'quota_unavailable'
