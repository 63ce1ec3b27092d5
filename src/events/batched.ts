// Many writes in one: each item waits for the statement that writes it; while one statement runs, the items that
// arrive meanwhile gather into the next. No timer: a lone item is written at once, and under load the batches grow
// with the load.
export function batched<T>(write: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let queue: { item: T; ok: () => void; fail: (e: unknown) => void }[] = []
  let running = false
  async function drain() {
    running = true
    while (queue.length) {
      const batch = queue
      queue = []
      try {
        await write(batch.map((b) => b.item))
        for (const b of batch) b.ok()
      } catch (e) {
        for (const b of batch) b.fail(e)
      }
    }
    running = false
  }
  return (item) =>
    new Promise<void>((ok, fail) => {
      queue.push({ item, ok, fail })
      if (!running) void drain()
    })
}
