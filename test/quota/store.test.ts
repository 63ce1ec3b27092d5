import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { postgresStore } from '../../src/quota/postgres-store.js'
import type { QuotaStore } from '../../src/quota/store.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { MemoryQuotaDatabase } from '../support/quota-memory.js'

// One suite, two implementations: the PostgreSQL store the service runs on, and the in-memory model the quota's model
// test runs on (test/support/quota-memory.ts). Both must answer every case alike, so the model cannot drift from the
// database.

const LIMITS = { FREE: 5, STARTER: 12, PRO: 30, ENTERPRISE: null }
const MONTH = '2026-01-01'
const LEASE_MS = 60_000

interface Harness {
  store(process: string): QuotaStore
  account(plan: string): Promise<string>
  expire(process: string): Promise<void>
}

async function postgres(t: Test): Promise<Harness> {
  const db = await openTestDatabase(t, await testDatabase(t))
  return {
    store: (processId) => postgresStore(db.raw, { limits: LIMITS, leaseMs: LEASE_MS, processId }),
    async account(plan) {
      const email = `s${randomUUID()}@example.com`
      await createKey(db.sql, { email, plan: plan as 'PRO' })
      const [{ account_id }] = await db.sql<
        { account_id: string }[]
      >`select account_id from users where email = ${email}`
      return account_id
    },
    async expire(process) {
      await db.sql`update quota_processes set expires_at = now() - interval '1 second' where id = ${process}`
    },
  }
}

async function memory(): Promise<Harness> {
  const db = new MemoryQuotaDatabase(LIMITS)
  return {
    store: (process) => db.store(process, LEASE_MS, false),
    async account(plan) {
      const id = randomUUID()
      db.plans.set(id, plan)
      return id
    },
    async expire(process) {
      db.leases.set(process, db.now - 1)
    },
  }
}

const change = (c: Partial<{ reserve: number; spend: number; giveBack: number; unspend: number }>) => ({
  reserve: 0,
  spend: 0,
  giveBack: 0,
  unspend: 0,
  ...c,
})

for (const [name, open] of [
  ['PostgreSQL', postgres],
  ['the in-memory model', memory],
] as const) {
  t.test(`the quota store: ${name}`, async (t) => {
    const h = await open(t)
    const [p1, p2] = [randomUUID(), randomUUID()]
    const [s1, s2] = [h.store(p1), h.store(p2)]
    t.equal(await s1.renew(), true, 'a first lease: lapsed, since it never existed')
    t.equal(await s1.renew(), false, 'renewed in time')
    await s2.renew()
    const free = await h.account('FREE')

    t.same(await s1.apply(free, MONTH, change({ reserve: 3 })), {
      granted: 3,
      spent: 0,
      used: 0,
      held: 3,
      limit: 5,
      alive: true,
    })
    t.same(
      await s2.apply(free, MONTH, change({ reserve: 3 })),
      {
        granted: 2,
        spent: 0,
        used: 0,
        held: 5,
        limit: 5,
        alive: true,
      },
      "another process's hold counts against the limit"
    )
    t.same(
      await s1.apply(free, MONTH, change({ spend: 2 })),
      {
        granted: 0,
        spent: 2,
        used: 2,
        held: 3,
        limit: 5,
        alive: true,
      },
      'spent from the hold'
    )
    t.same(await s2.apply(free, MONTH, change({ giveBack: 1 })), {
      granted: 0,
      spent: 0,
      used: 2,
      held: 2,
      limit: 5,
      alive: true,
    })
    t.same(
      await s1.apply(free, MONTH, change({ unspend: 1, giveBack: 1 })),
      {
        granted: 0,
        spent: 0,
        used: 1,
        held: 2,
        limit: 5,
        alive: true,
      },
      'an answer withheld after all: moved back and given back'
    )
    t.same(await s1.read(free, MONTH), { used: 1, held: 2 })

    await h.expire(p2)
    t.same(await s1.read(free, MONTH), { used: 1, held: 1 }, "a dead process's hold no longer counts")
    t.same(
      await s2.apply(free, MONTH, change({ reserve: 1 })),
      {
        granted: 0,
        spent: 0,
        used: 1,
        held: 1,
        limit: 5,
        alive: false,
      },
      'nothing is granted under a lapsed lease'
    )
    t.equal(await s2.renew(), true, 'renewing tells the lease had lapsed')
    t.same(
      await s2.apply(free, MONTH, change({ spend: 5 })),
      {
        granted: 0,
        spent: 3,
        used: 4,
        held: 1,
        limit: 5,
        alive: true,
      },
      'units no longer held are spent only within the limit'
    )
    t.same(await s1.apply(free, MONTH, change({ spend: 1, reserve: 1 })), {
      granted: 0,
      spent: 1,
      used: 5,
      held: 0,
      limit: 5,
      alive: true,
    })

    const ent = await h.account('ENTERPRISE')
    t.same(
      await s1.apply(ent, MONTH, change({ reserve: 1000, spend: 2 })),
      {
        granted: 1000,
        spent: 2,
        used: 2,
        held: 1000,
        limit: null,
        alive: true,
      },
      'unlimited: every unit, and spends beyond the hold'
    )
    t.same(
      await s1.apply(randomUUID(), MONTH, change({ reserve: 1 })),
      {
        granted: 0,
        spent: 0,
        used: 0,
        held: 0,
        limit: 0,
        alive: true,
      },
      'no such account: nothing'
    )

    await s1.end()
    t.same(await s2.read(ent, MONTH), { used: 2, held: 0 }, 'an ended lease drops its holds')
  })
}
