// Heap held by the rate limiter for 100,000 active keys (run with --expose-gc).
import { SlidingWindow } from '../src/limits/limits.js'

const gc = (globalThis as { gc?: () => void }).gc!
function measure(hits: number) {
  gc()
  const before = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
  const w = new SlidingWindow(300, 60_000)
  for (let i = 0; i < 100_000; i++) for (let h = 0; h < hits; h++) w.hit(`k${i.toString(36).padStart(12, '0')}`)
  gc()
  const after = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
  w.close()
  if (w.size !== 100_000) throw new Error('keys lost')
  return (after - before) / 1024 / 1024
}
process.stdout.write(`${JSON.stringify({ one: measure(1), ten: measure(10), full: measure(300) })}\n`)
