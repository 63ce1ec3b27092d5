// One kind of delivery the delivery worker runs (webhook POSTs, mails): it claims due jobs up to its own concurrency,
// runs each, and gives back the claims of jobs it was running when it is drained (a process stopping).

export interface LaneSpec<J> {
  concurrency: number
  claim(now: Date, limit: number): Promise<J[]>
  run(job: J): Promise<void>
  release(jobs: J[]): Promise<void>
  prune?(now: Date): Promise<unknown>
  onError(job: J, err: unknown): void
}

export interface Lane {
  // Claims what is due and starts it; true when it took all it could (more may be due).
  tick(now: Date): Promise<boolean>
  prune(now: Date): Promise<unknown>
  // Waits for the jobs under way, then gives back their claims.
  drain(): Promise<void>
}

export function createLane<J>(spec: LaneSpec<J>, onDone: () => void): Lane {
  const inFlight = new Map<J, Promise<void>>()
  return {
    async tick(now) {
      const free = spec.concurrency - inFlight.size
      if (free <= 0) return false
      const claimed = await spec.claim(now, free)
      for (const job of claimed) {
        const run = spec
          .run(job)
          .catch((e) => spec.onError(job, e))
          .finally(() => {
            inFlight.delete(job)
            onDone()
          })
        inFlight.set(job, run)
      }
      return claimed.length === free
    },
    prune: async (now) => spec.prune?.(now),
    async drain() {
      const claims = [...inFlight.keys()]
      await Promise.all(inFlight.values())
      await spec.release(claims)
    },
  }
}
