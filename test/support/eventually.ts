export interface EventuallyOptions {
  // Milliseconds before giving up; generous, since only a failing test waits that long.
  timeout?: number
  // Milliseconds between two polls.
  interval?: number
  // What is awaited, for the failure's message.
  what?: string
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>

// Polls `condition` until it gives a truthy value, and returns that value; throws once `timeout` has passed. The one
// way the tests wait: for something observable, never for a fixed time.
export async function eventually<T>(
  condition: () => T | Promise<T>,
  { timeout = 10_000, interval = 50, what = 'the condition' }: EventuallyOptions = {}
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeout
  for (;;) {
    const value = await condition()
    if (value) return value as Truthy<T>
    if (Date.now() >= deadline) throw new Error(`${what}: still not the case after ${timeout} ms`)
    await new Promise((ok) => setTimeout(ok, interval))
  }
}
