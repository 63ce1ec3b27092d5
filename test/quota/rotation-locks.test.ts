import { randomUUID } from 'node:crypto'
import postgres from 'postgres'
import t from 'tap'
import { rotateKey } from '../../src/accounts/key-lifecycle.js'
import { prefixOf } from '../../src/accounts/key-format.js'
import { eventually } from '../support/eventually.js'
import { startTestServer } from '../support/server.js'

// A rotation while a process's batch holds the old key's count row (sql/027): the batch adds a hold (its foreign key
// check locks the key's row for key share) while the rotation, holding the key's row, waits for the count row. Neither
// may wait for the other (PostgreSQL would break that deadlock by failing one of them). Needs a second connection
// holding a row lock: PostgreSQL only (the embedded database serves one at a time).
const skip = process.env.DATABASE_URL ? false : 'needs DATABASE_URL (a lock held from a second connection)'

t.test('a rotation waits for a batch on the old key; both complete, and the hold moves', { skip }, async (t) => {
  const s = await startTestServer(t, {})
  const email = `lock-${Math.random().toString(36).slice(2)}@example.com`
  const prefix = prefixOf(await s.key({ email, limits: { monthlyCompletions: 4 } }))
  const process = randomUUID()
  const month = `${new Date().toISOString().slice(0, 7)}-01`
  const other = postgres(s.config.DATABASE_URL as string, { max: 1, onnotice: () => {} })
  t.teardown(() => other.end())
  await other`insert into quota_processes (id, expires_at) values (${process}, now() + interval '1 minute')`
  let release = () => {}
  let lockTaken = () => {}
  const held = new Promise<void>((r) => (release = r))
  const taken = new Promise<void>((r) => (lockTaken = r))
  await other`insert into quota_key_usage (prefix, month, used) values (${prefix}, ${month}, 0)`
  const batch = other.begin(async (tx) => {
    await tx`select used from quota_key_usage where prefix = ${prefix} and month = ${month} for update`
    lockTaken()
    await held
    const [r] = await tx`select granted from studio_quota_key_apply(${prefix}, ${month}, ${process}, 1, 0, 0, 0)`
    return r.granted
  })
  await taken
  const rotation = rotateKey(s.db.sql, { prefix, graceSeconds: 3600 })
  await eventually(
    async () =>
      (
        await s.db.sql`select 1 from pg_stat_activity
                       where datname = current_database() and wait_event_type = 'Lock' and query like '%quota_key_usage%'`
      ).length > 0
  )
  release()
  t.equal(await batch, 1, 'the batch got its unit')
  const rotated = await rotation
  t.ok(rotated, 'the rotation went through')
  const holds = await s.db.sql`select prefix, units from quota_key_holds where process_id = ${process}`
  t.same(holds, [{ prefix: rotated!.prefix, units: 1 }], "the batch's hold moved to the new key")
})
