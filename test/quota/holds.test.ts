import t, { type Test } from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { parseConfig } from '../../src/ops/config.js'
import { createLogger } from '../../src/ops/log.js'
import { FLOOR, IDLE_MS, MAX_HELD } from '../../src/quota/ahead.js'
import { limitsByPlan } from '../../src/quota/plans.js'
import { postgresStore } from '../../src/quota/postgres-store.js'
import { createQuota, type Quota } from '../../src/quota/quota.js'
import type { QuotaStore } from '../../src/quota/store.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { startTestServer } from '../support/server.js'

// Units held ahead (src/quota/ahead.ts) over PostgreSQL: a busy account's calls take units its process reserved
// before they came; the store counts them as held, so no limit is ever overspent, and they go back when the calls
// stop, the plan changes, the month ends or the process closes. Time is the test's: `now` moves, nothing sleeps.

async function setup(t: Test, env: Record<string, string> = {}) {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const config = parseConfig({ ...dbEnv, ...env })
  const clock = { now: 0, wall: Date.UTC(2026, 0, 15) }
  const account = async (plan: string) => {
    const email = `h${Math.random().toString(36).slice(2)}@example.com`
    await createKey(db.sql, { email, plan: plan as 'PRO' })
    const [{ account_id }] = await db.sql<{ account_id: string }[]>`select account_id from users where email = ${email}`
    return account_id
  }
  const counts = async (accountId: string) => {
    const [row] = await db.sql<{ used: number; held: number }[]>`
      select coalesce(max(q.used), 0)::int as used,
             (select coalesce(sum(units), 0)::int from quota_holds where account_id = ${accountId}) as held
      from quota_usage q where q.account_id = ${accountId}`
    return row
  }
  const quota = async (wrap = (store: QuotaStore) => store) => {
    const store = wrap(postgresStore(db.raw, { limits: limitsByPlan(config), leaseMs: 30_000 }))
    const q = createQuota({
      store,
      limits: config,
      log: createLogger('silent'),
      leaseMs: 30_000,
      clock: () => clock.wall + clock.now,
      monotonic: () => clock.now,
    })
    await q.start()
    t.teardown(() => q.close())
    return q
  }
  return { account, counts, quota, clock, db }
}

// `calls` calls in bursts of 10, the clock moving `ms` over them; each spends its unit. Resolves to those answered.
async function busy(q: Quota, clock: { now: number }, accountId: string, calls: number, ms: number) {
  let answered = 0
  for (let i = 0; i < calls; i += 10) {
    const burst = Array.from({ length: Math.min(10, calls - i) }, () => q.ticket(accountId, () => {}))
    await Promise.all(
      burst.map((t) =>
        t.spend().then(
          () => answered++,
          () => {}
        )
      )
    )
    clock.now += ms / (calls / 10)
  }
  return answered
}

t.test('a busy account holds units ahead; they are counted, and go back once its calls stop', async (t) => {
  const { account, counts, quota, clock } = await setup(t)
  const q = await quota()
  const acc = await account('ENTERPRISE')
  t.equal(await busy(q, clock, acc, 1, 0), 1, 'a first call: nothing known, nothing held')
  t.equal(q.held(acc), 0)
  t.equal(await busy(q, clock, acc, 300, 300), 300)
  const held = q.held(acc)
  t.ok(held > 0 && held <= MAX_HELD, `units held ahead while busy (${held})`)
  await eventually(
    async () => {
      q.tick()
      return (await counts(acc)).used === 301
    },
    { what: 'the spends sent' }
  )
  t.same(await counts(acc), { used: 301, held: q.held(acc) }, 'the store counts them as held')
  clock.now += IDLE_MS
  q.tick()
  t.equal(q.held(acc), 0, 'quiet for a while: given back')
  await eventually(async () => (await counts(acc)).held === 0, { what: 'the hold given back' })
  t.same(await counts(acc), { used: 301, held: 0 })
})

t.test("a failed call's unit goes back into the hold; a plan change and closing give the hold back", async (t) => {
  const { account, counts, quota, clock } = await setup(t)
  const q = await quota()
  const acc = await account('ENTERPRISE')
  await busy(q, clock, acc, 300, 300)
  const held = q.held(acc)
  t.ok(held > 0)
  const ticket = q.ticket(acc, () => {})
  await ticket.committed()
  await ticket.giveBack()
  t.equal(q.held(acc), held, 'the unit taken and given back: held again')
  q.drop(acc)
  t.equal(q.held(acc), 0, 'the account changed: nothing held')
  await eventually(
    async () => {
      q.tick()
      const c = await counts(acc)
      return c.held === 0
    },
    { what: 'the hold given back and the spends sent' }
  )
  t.same(await counts(acc), { used: 300, held: 0 })
  await busy(q, clock, acc, 300, 300)
  t.ok(q.held(acc) > 0)
  await q.close()
  t.same(await counts(acc), { used: 600, held: 0 }, 'closing sent every spend and gave the hold back')
})

t.test('two processes holding ahead never grant more than the limit, and nothing near it', async (t) => {
  const limit = FLOOR + 500
  const { account, counts, quota, clock } = await setup(t, { STUDIO_QUOTA_PRO: String(limit) })
  const [a, b, c] = [await quota(), await quota(), await quota()]
  const acc = await account('PRO')
  const answered = await Promise.all([busy(a, clock, acc, 1200, 400), busy(b, clock, acc, 1200, 400)])
  const total = answered[0] + answered[1]
  t.ok(total <= limit, `answered ${total} of ${limit}`)
  t.equal(a.held(acc) + b.held(acc), 0, 'under FLOOR units left, an answer ends the hold')
  await Promise.all([a.close(), b.close()])
  t.same(await counts(acc), { used: total, held: 0 }, 'after closing, used is what was answered')
  t.equal(await busy(c, clock, acc, 600, 0), limit - total, 'and every unit not spent is still there')
})

t.test('at a new month, the hold of the last goes back to its month', async (t) => {
  const { account, quota, clock, db } = await setup(t)
  const q = await quota()
  const acc = await account('ENTERPRISE')
  clock.wall = Date.UTC(2026, 0, 31, 23, 59, 59) - clock.now
  await busy(q, clock, acc, 300, 300)
  t.ok(q.held(acc) > 0)
  clock.wall += 2000
  t.equal(q.held(acc), 0, 'nothing held for the new month')
  await busy(q, clock, acc, 1, 0)
  await q.close()
  const rows = await db.sql`select month::text, used from quota_usage where account_id = ${acc} order by month`
  t.same(
    rows.map((r) => [r.month, r.used]),
    [
      ['2026-01-01', 300],
      ['2026-02-01', 1],
    ]
  )
  t.equal((await db.sql`select * from quota_holds`).length, 0, 'and nothing is held in either')
})

t.test('GET /me leaves out what its process holds ahead', async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const s = await startTestServer(t, { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url })
  const key = await s.key({ email: 'me-holds@example.com', plan: 'ENTERPRISE' })
  const post = () =>
    s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'hi' }] } })
  let ok = 0
  for (let wave = 0; wave < 15; wave++) {
    const rs = await Promise.all(Array.from({ length: 10 }, post))
    ok += rs.filter((r) => r.status === 200).length
    await Promise.all(rs.map((r) => r.arrayBuffer()))
  }
  t.equal(ok, 150)
  const me = (await (await s.fetch('/api/v1/me', { key })).json()) as { quota: { used: number } }
  t.equal(me.quota.used, 150, 'the caller sees its calls, whatever its process holds ahead')
})

t.test('a hold given back during a read is sent once the read ends, and left out of it', async (t) => {
  const { account, counts, quota, clock } = await setup(t)
  const reads: (() => void)[] = []
  const q = await quota((store) => ({
    ...store,
    async read(accountId, month) {
      const counted = await store.read(accountId, month)
      await new Promise<void>((ok) => reads.push(ok))
      return counted
    },
  }))
  const acc = await account('ENTERPRISE')
  t.equal(await busy(q, clock, acc, 300, 300), 300)
  const used = q.used(acc)
  await eventually(() => reads.length === 1, { what: 'the read' })
  const held = q.held(acc)
  t.ok(held > 0, 'units held ahead, the batches under way answered')
  clock.now += IDLE_MS
  q.tick()
  t.equal(q.held(acc), 0, 'the calls stopped during the read: the process gives its hold back')
  await eventually(async () => (await counts(acc)).used === 300, { what: 'the spends of the answers' })
  t.same(await counts(acc), { used: 300, held }, 'but the store keeps it until the read ends')
  reads[0]()
  t.equal(await used, 300, 'what was held ahead is left out')
  await eventually(async () => (await counts(acc)).held === 0, { what: 'the hold back in the store' })
  const again = q.used(acc)
  await eventually(() => reads.length === 2, { what: 'the second read' })
  reads[1]()
  t.equal(await again, 300, 'and read again once it is given back')
})

t.test('a read waits for the batches under way, and leaves out a give-back queued behind them', async (t) => {
  const { account, counts, quota, clock } = await setup(t)
  const gated: (() => void)[] = []
  let gate = false
  const q = await quota((store) => ({
    ...store,
    async apply(accountId, month, change) {
      if (gate) await new Promise<void>((ok) => gated.push(ok))
      return store.apply(accountId, month, change)
    },
  }))
  const acc = await account('ENTERPRISE')
  t.equal(await busy(q, clock, acc, 300, 300), 300)
  t.equal(await q.used(acc), 300)
  t.equal(await q.used(acc), 300, 'nothing under way (the first read held a refill back until it ended)')
  gate = true
  for (const _ of [1, 2]) {
    await q.ticket(acc, () => {}).spend()
    q.tick()
  }
  t.equal(gated.length, 2, 'two batches under way, each with the spend of one answer')
  const held = q.held(acc)
  t.ok(held > 0, 'units held ahead')
  clock.now += IDLE_MS
  q.tick()
  t.equal(q.held(acc), 0, 'the calls stopped: the hold is given back, behind the batches under way')
  const used = q.used(acc)
  gated[0]()
  gated[1]()
  t.equal(await used, 302, 'the read counts the calls, not what goes back')
  gate = false
  for (const ok of gated) ok()
  await eventually(async () => (await counts(acc)).held === 0, { what: 'the hold back in the store' })
  t.same(await counts(acc), { used: 302, held: 0 })
})
