import { eventually } from './eventually.js'
import type { TestServer } from './server.js'

// Two calls 100 to 500 ms apart (a slow machine) make a process hold units ahead (src/quota/ahead.ts), which its next
// call takes without asking the store. They go back once its calls stop for IDLE_MS: a test whose next call must ask
// the store waits for that.
export async function nothingHeldAhead(s: TestServer) {
  const held = async () =>
    (await s.db.sql<{ n: number }[]>`select coalesce(sum(units), 0)::int as n from quota_holds`)[0].n
  await eventually(async () => (await held()) === 0, { what: 'no unit held ahead' })
}
