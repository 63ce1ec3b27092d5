// Group commit: the writes asked for while a batch gathers are made by one call of `write` (one statement, one
// commit), and each caller waits for its own outcome, which `write` gives item by item as a promise (one item can
// fail alone, or be finished by more work once the batch is done; the batch counts as running until `write` returns). A
// batch closes when it holds `max` items, or at the end of the event loop's turn that opened it (setImmediate): a lone
// write waits for nothing but that turn, and under load the items that arrive in one turn share a commit. While a
// batch is being written, the next one starts beside it only once it holds `alongside` items (a commit costs about
// what that many items' own work does, so a smaller batch is cheaper to add to the next one), and at most
// `concurrent` batches are written at once; the rest keep gathering and close when a batch ends (the pool would have
// held them back anyway), so that batches grow with the load.
export interface GroupCommitOptions {
  max: number
  concurrent: number
  alongside: number
}

interface Waiting<I, O> {
  item: I
  ok: (o: Promise<O>) => void
  fail: (e: unknown) => void
}

export function groupCommit<I, O>(
  write: (items: I[]) => Promise<Promise<O>[]>,
  { max, concurrent, alongside }: GroupCommitOptions
): (item: I) => Promise<O> {
  const gathering: Waiting<I, O>[] = []
  let scheduled = false
  let running = 0

  async function run(batch: Waiting<I, O>[]) {
    running++
    try {
      const outcomes = await write(batch.map((w) => w.item))
      batch.forEach((w, i) => w.ok(outcomes[i]))
    } catch (e) {
      for (const w of batch) w.fail(e)
    } finally {
      running--
      close()
    }
  }

  // Sends what has gathered, `max` items a batch, while batches may start.
  const mayStart = () => running === 0 || (running < concurrent && gathering.length >= alongside)
  function close() {
    while (gathering.length && mayStart()) void run(gathering.splice(0, max))
  }

  return (item) =>
    new Promise<O>((ok, fail) => {
      gathering.push({ item, ok, fail })
      if (gathering.length >= max) return close()
      if (scheduled) return
      scheduled = true
      setImmediate(() => {
        scheduled = false
        close()
      })
    })
}
