import postgres from 'postgres'
import t, { type Test } from 'tap'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { openTestDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'
import { nothingHeldAhead } from '../support/held-ahead.js'

// A reservation that outlives its deadline (the quota row locked by another connection): its late commit is given
// back even when the server shuts down meanwhile, and an overlapped call that fails on its own keeps its own error.
// Needs a second connection holding a row lock: PostgreSQL only (the embedded database serves one at a time).

const skip = process.env.DATABASE_URL ? false : 'needs DATABASE_URL (a lock held from a second connection)'

async function setup(t: Test, email: string, thirdFails: boolean) {
  let n = 0
  const ok = json(200, anthropicMessage())
  const bad = json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'no' } })
  const upstream = await fakeUpstream(t, (req, res, seen) => (++n > 2 && thirdFails ? bad : ok)(req, res, seen))
  const s = await startTestServer(t, {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_DB_TIMEOUT_MS: '300',
    // Far from the limit, where a reservation runs alongside its call (quota/knowledge.ts).
    STUDIO_QUOTA_FREE: '2000',
  })
  const key = await s.key({ email })
  const post = () =>
    s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'hi' }] } })
  t.equal((await post()).status, 200)
  t.equal((await post()).status, 200, 'two answers: this process now overlaps its reservations')
  await nothingHeldAhead(s)
  const other = postgres(s.config.DATABASE_URL as string, { max: 1, onnotice: () => {} })
  t.teardown(() => other.end())
  const [{ account_id }] = await s.db.sql<{ account_id: string }[]>`select account_id from quota_usage`
  let release = () => {}
  let lockTaken = () => {}
  const held = new Promise<void>((r) => (release = r))
  const taken = new Promise<void>((r) => (lockTaken = r))
  const locked = other.begin(async (tx) => {
    await tx`select * from quota_usage where account_id = ${account_id} for update`
    lockTaken()
    await held
  })
  await taken
  // Units spent and held by any process, alive or not: what the account is charged or may still be.
  const used = async () =>
    (
      await other<{ used: number }[]>`
      select q.used + (select coalesce(sum(units), 0)::int from quota_holds h where h.account_id = q.account_id) as used
      from quota_usage q where account_id = ${account_id}`
    )[0].used
  return {
    s,
    post,
    unlock: async () => {
      release()
      await locked
    },
    used,
  }
}

t.test('shutdown waits for a late reservation and gives its unit back', { skip }, async (t) => {
  const { s, post, unlock, used } = await setup(t, 'late-close@example.com', false)
  t.equal((await post()).status, 503, 'the reservation timed out')
  const closing = s.close()
  await eventually(
    () =>
      fetch(`${s.url}/healthz`).then(
        () => false,
        () => true
      ),
    { what: 'the listener closed' }
  )
  await unlock()
  await closing
  t.equal(await used(), 2, 'the late commit was given back before the pool closed')
})

t.test(
  'an overlapped call that fails upstream answers its own error, not the reservation timeout',
  { skip },
  async (t) => {
    const { s, post, unlock, used } = await setup(t, 'late-400@example.com', true)
    // The call's answer waits for its reservation to be decided: it timed out, the row still locked.
    const r = await post()
    await unlock()
    t.equal(r.status, 422, "the upstream 400 is the caller's invalid request")
    t.equal(((await r.json()) as { error: { code: string } }).error.code, 'invalid_request')
    // The late reservation commits once the lock is gone, and is given back: closing waits for both (a read before
    // may come before the late commit and see 2 only for it to become 3, then 2 again).
    await s.close()
    t.equal(await used(), 2, 'nothing charged for the failed call')
  }
)

t.test(
  'a close cut short by STUDIO_SHUTDOWN_TIMEOUT_MS still gives back the units of the calls it aborted',
  async (t) => {
    const upstream = await fakeUpstream(t, () => {}) // never answers
    const s = await startTestServer(t, {
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: upstream.url,
      STUDIO_SHUTDOWN_TIMEOUT_MS: '300',
    })
    const key = await s.key({ email: 'forced-close@example.com' })
    const calls = Array.from({ length: 3 }, () =>
      s
        .fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'hi' }] } })
        .then(
          (r) => r.status,
          () => 'cut off'
        )
    )
    await eventually(() => upstream.seen.length >= 3, { what: 'three calls upstream' })
    t.equal(upstream.seen.length, 3, 'three calls under way')
    await s.close()
    t.same(await Promise.all(calls), ['cut off', 'cut off', 'cut off'])
    const db = await openTestDatabase(t, {
      DATABASE_URL: s.config.DATABASE_URL ?? '',
      STUDIO_DATA_DIR: s.config.STUDIO_DATA_DIR,
    })
    const [{ used }] = await db.sql<{ used: number }[]>`select used from quota_usage`
    t.equal(used, 0, 'their units were given back before the pool closed')
    const outcomes = await db.sql<{ outcome: string }[]>`select outcome from completions`
    t.same(
      outcomes.map((o) => o.outcome),
      ['client_closed', 'client_closed', 'client_closed'],
      'and they were recorded'
    )
    t.notOk(
      s.log.lines.some((l) => /not given back|records lost/.test(l)),
      'nothing was lost'
    )
  }
)
