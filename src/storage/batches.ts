// Old rows are deleted in batches of 1,000 (short statements, locks held briefly; rows another process is deleting
// are skipped), so that a backlog of old rows never holds up the work beside it.
const BATCH = 1000

// Runs `batch` (one statement acting on at most `limit` rows, FOR UPDATE SKIP LOCKED) until it acts on fewer.
// Returns the rows acted on.
export async function inBatches(batch: (limit: number) => Promise<{ count: number }>): Promise<number> {
  let done = 0
  for (;;) {
    const { count } = await batch(BATCH)
    done += count
    if (count < BATCH) return done
  }
}
