// One kind of delivery the delivery worker runs (webhook POSTs, mails): it claims due jobs up to its own concurrency,
// runs each, and gives back the claims of jobs it was running when it is drained (a process stopping).

export interface LaneSpec<J> {
  concurrency: number
  claim(now: Date, limit: number): Promise<J[]>
  // Once `stopping` aborts, a job starts nothing new and cuts short what it safely can, finishing nothing: its claim
  // is given back.
  run(job: J, stopping: AbortSignal): Promise<void>
  release(jobs: J[]): Promise<void>
  prune?(now: Date): Promise<unknown>
  onError(job: J, err: unknown): void
}

export interface Lane {
  // Claims what is due and starts it; true when it took all it could (more may be due).
  tick(now: Date): Promise<boolean>
  prune(now: Date): Promise<unknown>
  // Waits for the jobs under way (each gives its claim back as it ends, once stopping).
  drain(): Promise<void>
}

export function createLane<J>(spec: LaneSpec<J>, onDone: () => void, stopping: AbortSignal): Lane {
  const inFlight = new Map<J, Promise<void>>()
  return {
    async tick(now) {
      const free = spec.concurrency - inFlight.size
      if (free <= 0) return false
      const claimed = await spec.claim(now, free)
      // Stopped while claiming: the claims go back now, so another process takes them at once, not after the lease.
      if (stopping.aborted) {
        await spec.release(claimed)
        return false
      }
      for (const job of claimed) {
        const run = spec
          .run(job, stopping)
          .catch((e) => spec.onError(job, e))
          // Once stopping, a job's claim goes back as soon as it ends (one it finished is no longer held: no change).
          .then(() => (stopping.aborted ? spec.release([job]) : undefined))
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
      await Promise.all(inFlight.values())
    },
  }
}
