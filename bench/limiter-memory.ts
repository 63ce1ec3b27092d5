// Heap held by the rate limiter for 100,000 active keys (run with --expose-gc). Each of a key's requests comes at a
// different millisecond, as a key's requests spread over the minute would: the worst case, one run per request.
import { SlidingWindow } from '../src/limits/limits.js'

const gc = (globalThis as { gc?: () => void }).gc!
function measure(hits: number) {
  gc()
  const before = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
  let now = 0
  const w = new SlidingWindow(300, 60_000, () => now)
  const keys = Array.from({ length: 100_000 }, (_, i) => `k${i.toString(36).padStart(12, '0')}`)
  for (let h = 0; h < hits; h++, now++) for (const key of keys) w.hit(key)
  gc()
  const after = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
  w.close()
  if (w.size !== 100_000) throw new Error('keys lost')
  return (after - before) / 1024 / 1024
}
process.stdout.write(`${JSON.stringify({ one: measure(1), ten: measure(10), full: measure(300) })}\n`)
