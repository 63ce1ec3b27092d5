import { type Sql, withTimeout } from '../storage/db.js'

// When each key was last used, written in batches: `mark` notes a use, `flush` writes what was noted since the last
// flush. One flush at a time, each bounded: a frozen database must not stack transactions or hold shutdown.
export function createKeyUsage(sql: Sql, deadlineMs: number) {
  const used = new Map<string, number>()
  let flushing: Promise<void> | null = null

  async function flushBatch() {
    if (used.size === 0) return
    const batch = new Map(used)
    used.clear()
    // Rows are locked in prefix order first: processes flushing overlapping keys (workers, instances) then wait for
    // each other instead of deadlocking, as they did when each updated in its own order.
    const prefixes = [...batch.keys()].sort()
    const times = prefixes.map((p) => new Date(batch.get(p)!).toISOString())
    try {
      const write = sql.begin(async (tx) => {
        await tx`select 1 from api_keys where prefix = any(${prefixes}::text[]) order by prefix for update`
        await tx`
        update api_keys k set last_used_at = u.t
        from unnest(${prefixes}::text[], ${times}::timestamptz[]) as u(p, t)
        where k.prefix = u.p and (k.last_used_at is null or k.last_used_at < u.t)`
      })
      await withTimeout(write, deadlineMs)
    } catch (e) {
      for (const [p, t] of batch) if (!used.has(p)) used.set(p, t)
      throw e
    }
  }

  return {
    mark: (prefix: string, at: number) => void used.set(prefix, at),
    flush: (): Promise<void> => {
      flushing ??= flushBatch().finally(() => {
        flushing = null
      })
      return flushing
    },
  }
}
