import t, { type Test } from 'tap'
import { createKey } from '../../src/accounts/accounts.js'
import { FLOOR, IDLE_MS, MAX_HELD } from '../../src/limits/holds.js'
import { createQuota, type Quota } from '../../src/limits/quota.js'
import { parseConfig } from '../../src/ops/config.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

// Units held ahead (src/limits/holds.ts): a busy account's calls take units its process reserved before they came;
// the database counts them as used, so no limit is ever overspent, and they go back when the calls stop, the plan
// changes or the process closes.

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))

async function setup(t: Test, env: Record<string, string> = {}) {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const config = parseConfig({ ...dbEnv, ...env })
  const account = async (plan: string) => {
    const email = `h${Math.random().toString(36).slice(2)}@example.com`
    await createKey(db.sql, { email, plan: plan as 'PRO' })
    const [{ account_id }] = await db.sql<{ account_id: string }[]>`select account_id from users where email = ${email}`
    return account_id
  }
  const used = async (accountId: string) =>
    (await db.sql<{ used: number }[]>`select used from quota_usage where account_id = ${accountId}`)[0]?.used ?? 0
  const quota = () => {
    const q = createQuota(db.raw, config)
    t.teardown(() => q.close())
    return q
  }
  return { account, used, quota }
}

// Until the database counts `granted` plus what `q` holds (a refill may still be under way), for at most 800 ms.
async function settled(q: Quota, accountId: string, granted: number, used: (a: string) => Promise<number>) {
  for (let i = 0; i < 40 && (await used(accountId)) !== granted + q.held(accountId); i++) await sleep(20)
  return used(accountId)
}

// `calls` reservations spread over about `ms`, in bursts of 10; resolves to how many were granted.
async function busy(q: Quota, accountId: string, calls: number, ms: number) {
  let granted = 0
  const all: Promise<unknown>[] = []
  for (let i = 0; i < calls; i += 10) {
    for (let j = 0; j < 10 && i + j < calls; j++)
      all.push(
        q.reserve(accountId).then(
          () => granted++,
          () => {}
        )
      )
    await sleep(ms / (calls / 10))
  }
  await Promise.all(all)
  return granted
}

t.test('a busy account holds units ahead; they are counted, and go back once its calls stop', async (t) => {
  const { account, used, quota } = await setup(t)
  const q = quota()
  const acc = await account('ENTERPRISE')
  t.equal(await busy(q, acc, 1, 0), 1, 'a first call: nothing known, nothing held')
  t.equal(q.held(acc), 0)
  t.equal(await busy(q, acc, 300, 300), 300)
  const held = q.held(acc)
  t.ok(held > 0 && held <= MAX_HELD, `units held ahead while busy (${held})`)
  t.equal(await settled(q, acc, 301, used), 301 + q.held(acc), 'the database counts them as used')
  await sleep(IDLE_MS * 2)
  t.equal(q.held(acc), 0, 'quiet for a while: given back')
  t.equal(await used(acc), 301)
})

t.test("a failed call's unit goes back into the hold; a plan change and closing give the hold back", async (t) => {
  const { account, used, quota } = await setup(t)
  const q = quota()
  const acc = await account('ENTERPRISE')
  await busy(q, acc, 300, 300)
  await settled(q, acc, 300, used)
  const held = q.held(acc)
  t.ok(held > 0)
  await q.release(await q.reserve(acc))
  t.equal(q.held(acc), held, 'the unit taken and given back: held again')
  t.equal(await used(acc), 300 + held, 'no write for it')
  q.drop(acc)
  t.equal(q.held(acc), 0, 'the account changed: nothing held')
  await sleep(100)
  t.equal(await used(acc), 300)

  await busy(q, acc, 300, 300)
  t.ok(q.held(acc) > 0)
  await q.close()
  t.equal(await used(acc), 600, 'closing gave the hold back')
})

t.test('two processes holding ahead never grant more than the limit, and nothing near it', async (t) => {
  const limit = FLOOR + 500
  const { account, used, quota } = await setup(t, { STUDIO_QUOTA_PRO: String(limit) })
  const [a, b, c] = [quota(), quota(), quota()]
  const acc = await account('PRO')
  const granted = await Promise.all([busy(a, acc, 1200, 400), busy(b, acc, 1200, 400)])
  const total = granted[0] + granted[1]
  t.ok(total <= limit, `granted ${total} of ${limit}`)
  t.equal(a.held(acc) + b.held(acc), 0, 'under FLOOR units left, an answer ends the hold')
  await Promise.all([a.close(), b.close()])
  t.equal(await used(acc), total, 'after closing, used is what was granted')
  t.equal(await busy(c, acc, 600, 0), limit - total, 'and every unit not granted is still there')
})

t.test('a refill that lands after a drop goes back; a unit given back after close goes to the database', async (t) => {
  const { account, used, quota } = await setup(t)
  const acc = await account('ENTERPRISE')
  const r = quota()
  await busy(r, acc, 300, 300)
  const n = await settled(r, acc, 300, used).then(() => r.held(acc))
  t.ok(n > 1)
  for (let i = 0; i < n - 1; i++) await r.reserve(acc) // from the hold: running low, it sends for more
  r.drop(acc)
  await sleep(200)
  t.equal(r.held(acc), 0, 'a refill that lands after the drop goes back')
  t.equal(await used(acc), 300 + n - 1)
  await r.close()
  await r.release({ accountId: acc, month: r.month().month })
  t.equal(await used(acc), 300 + n - 2, 'a unit given back after close goes to the database')
  t.equal(r.held(acc), 0)
})

t.test('at a new month, the hold of the last goes back to its month', async (t) => {
  let now = Date.UTC(2026, 0, 31, 23, 59, 59)
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  await createKey(db.sql, { email: 'month-hold@example.com', plan: 'ENTERPRISE' })
  const [{ account_id: acc }] = await db.sql`select account_id from users where email = 'month-hold@example.com'`
  const q = createQuota(db.raw, parseConfig(dbEnv), () => now)
  t.teardown(() => q.close())
  await busy(q, acc, 300, 300)
  t.ok(q.held(acc) > 0)
  now = Date.UTC(2026, 1, 1, 0, 0, 1)
  t.equal(q.held(acc), 0, 'nothing held for the new month')
  await busy(q, acc, 1, 0)
  await sleep(100)
  const rows = await db.sql`select month::text, used from quota_usage where account_id = ${acc} order by month`
  t.same(
    rows.map((r) => [r.month, r.used]),
    [
      ['2026-01-01', 300],
      ['2026-02-01', 1],
    ]
  )
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
  // A refill still under way could land between the database's answer and the count of units held.
  await sleep(200)
  const [{ used }] = await s.db.sql<{ used: number }[]>`select used from quota_usage`
  const me = (await (await s.fetch('/api/v1/me', { key })).json()) as { quota: { used: number } }
  t.equal(me.quota.used, 150, `the caller sees its calls (the database counts ${used}, holds included)`)
})
