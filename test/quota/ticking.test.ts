import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { parseConfig } from '../../src/ops/config.js'
import { createLogger } from '../../src/ops/log.js'
import { limitsByPlan } from '../../src/quota/plans.js'
import { postgresStore } from '../../src/quota/postgres-store.js'
import { createQuota, FORGET_MS } from '../../src/quota/quota.js'
import type { TickTimer } from '../../src/quota/ticker.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'

// The quota's ticks (src/quota/ticker.ts): every 50 ms while the process serves an account, and with none, only when
// its lease is due. The timer is the test's: it records what was set, and the test fires it; nothing sleeps.

interface Timeout {
  fn: () => void
  ms: number
  // Cleared by the ticker, or fired by the test: no longer pending either way.
  done: boolean
}

function testTimer() {
  const set: Timeout[] = []
  const timer: TickTimer = {
    set: (fn, ms) => {
      const x = { fn, ms, done: false }
      set.push(x)
      return x
    },
    clear: (x) => {
      ;(x as Timeout).done = true
    },
  }
  const pending = () => set.filter((x) => !x.done)
  const fire = () => {
    const [next] = pending()
    next.done = true
    next.fn()
  }
  return { timer, pending, fire }
}

t.test('an idle quota ticks only when its lease is due; a call wakes it until its account is forgotten', async (t) => {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const config = parseConfig(dbEnv)
  const email = `tick${Math.random().toString(36).slice(2)}@example.com`
  await createKey(db.sql, { email, plan: 'PRO' })
  const [{ account_id }] = await db.sql<{ account_id: string }[]>`select account_id from users where email = ${email}`
  const clock = { now: 0 }
  const { timer, pending, fire } = testTimer()
  const q = createQuota({
    store: postgresStore(db.raw, { limits: limitsByPlan(config), leaseMs: 30_000 }),
    limits: config,
    log: createLogger('silent'),
    leaseMs: 30_000,
    monotonic: () => clock.now,
    timer,
  })
  await q.start()
  t.teardown(() => q.close())
  q.run(50)
  const due = () => pending().map((x) => x.ms)

  t.same(due(), [10_000], 'no account: one tick, when a third of the lease has passed')
  clock.now = 4_000
  fire()
  t.same(due(), [6_000], 'woken early: asleep until the lease is due')

  const ticket = q.ticket(account_id, () => {})
  t.same(due(), [50], 'a call: its account is ticked for every 50 ms')
  await ticket.spend()
  clock.now += 50
  fire()
  t.same(due(), [50])

  clock.now += FORGET_MS
  fire()
  t.same(due(), [50], 'the account forgotten, the lease due: ticked again until the renewal is done')
  await eventually(() => {
    fire()
    return due()[0] > 50
  })
  t.ok(due()[0] >= 9_000 && due()[0] <= 10_000, `then asleep for a third of the lease (${due()[0]} ms)`)

  await q.close()
  t.same(due(), [], 'closed: no tick left')
})
