import type { SlidingWindow } from './limits.js'
import { MAX_BATCH } from './redis-script.js'

export interface MergeScript {
  studioMerge(keys: number, ...args: string[][]): Promise<number>
}

// At most about this many request times in one script call.
const MAX_TIMES = 10_000

// Writes into Redis what `unshared` holds (the requests a process granted on its own), each at its age (MERGE_SCRIPT),
// and empties it. The calls are sent before this returns, in batches; `args` is the limit and the window in ms. What
// a failed call carried is not sent again: the process's own window still holds it, so the bound holds regardless.
export function replay(script: MergeScript, unshared: SlidingWindow, space: string, args: string[]) {
  const now = unshared.clock()
  const sent: Promise<number>[] = []
  let keys: string[] = []
  let ages: string[] = []
  const send = () => {
    if (keys.length > 0) sent.push(script.studioMerge(keys.length, keys, args, ages))
    keys = []
    ages = []
  }
  for (const [key, times] of unshared.drain()) {
    keys.push(space + key)
    ages.push(String(times.length), ...times.map((t) => String(Math.max(0, now - t) * 1000)))
    if (keys.length >= MAX_BATCH || ages.length >= MAX_TIMES) send()
  }
  send()
  return Promise.all(sent)
}
