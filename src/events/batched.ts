// Many writes in one: each item waits for the statement that writes it; while one statement runs, the items that
// arrive meanwhile gather into the next. With `gatherMs`, an item that finds no statement running waits that long for
// others before its own is sent; without, a lone item is written at once and the batches grow with the load only.
export function batched<T>(write: (items: T[]) => Promise<void>, gatherMs = 0): (item: T) => Promise<void> {
  let queue: { item: T; ok: () => void; fail: (e: unknown) => void }[] = []
  let running = false
  async function drain() {
    running = true
    if (gatherMs > 0) await new Promise((ok) => setTimeout(ok, gatherMs))
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
