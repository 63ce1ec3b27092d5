import t, { type Test } from 'tap'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { openTestDatabase } from '../support/database.js'
import { nothingHeldAhead } from '../support/held-ahead.js'
import { startTestServer, type TestServer } from '../support/server.js'

// The reservation runs alongside the upstream call only when this process knows (from two answers) that units are
// left, a thousand or more: a refusal then (another process spent the rest) aborts the call and answers 429. Before
// that, nearer the limit, and once another process is seen spending, the reservation comes first and a refusal never
// reaches the upstream.

async function setup(t: Test, limit: number, email: string) {
  const slow = json(200, anthropicMessage())
  const upstream = await fakeUpstream(t, (req, res, seen) => setTimeout(() => slow(req, res, seen), 300))
  const s = await startTestServer(t, {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_QUOTA_FREE: String(limit),
  })
  const key = await s.key({ email })
  const post = () =>
    s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'hi' }] } })
  t.equal((await post()).status, 200, 'the first call (nothing known yet) reserves first and is answered')
  t.equal((await post()).status, 200, 'the second (one answer is not trusted yet) too')
  t.equal(upstream.seen.length, 2)
  await nothingHeldAhead(s)
  const refused = async () => {
    const r = await post()
    t.equal(r.status, 429)
    t.equal(((await r.json()) as any).error.code, 'quota_exceeded')
  }
  return { s, upstream, post, refused }
}

// Every completion the server recorded: read once it has closed (its recorder writes in batches, and flushes at
// close), so that a record written late is counted too.
async function outcomes(t: Test, s: TestServer) {
  await s.close()
  const db = await openTestDatabase(t, s.dbEnv)
  const rows = await db.sql<{ outcome: string }[]>`select outcome from completions order by created_at`
  return rows.map((o) => o.outcome)
}

t.test('far from the limit, a reservation refused while the call runs aborts it; then nothing goes up', async (t) => {
  const { s, upstream, post, refused } = await setup(t, 1010, 'overlap@example.com')

  // Another process spends the 1008 units this one believes are left (this one's two spends may still be on their way:
  // far from the limit, a spend goes with the next batch).
  await s.db.sql`update quota_usage set used = used + 1008`
  await refused()
  t.equal(upstream.seen.length, 3, 'the call had started alongside the reservation')
  await upstream.settled()
  t.equal(upstream.seen[2].aborted, true, 'and was aborted by the refusal')

  t.equal((await post()).status, 429)
  t.equal(upstream.seen.length, 3, 'another process seen spending: refused before any upstream call')

  const [{ used }] = await s.db.sql`select used from quota_usage`
  t.equal(used, 1010, 'nothing was charged for the refused calls')
  t.same(
    await outcomes(t, s),
    ['ok', 'ok', 'quota_exceeded'],
    'the aborted call is recorded, the one refused first not'
  )
})

t.test('near the limit, the reservation always comes first: a refusal never reaches the upstream', async (t) => {
  const { s, upstream, refused } = await setup(t, 10, 'near@example.com')

  const refusals = () => s.metric('studio_refused_total{reason="quota_exceeded"}')
  t.equal(refusals(), 0, 'no refusal counted for the calls answered')
  // Two answers trusted, eight units left by this process's count; another process spends them.
  await s.db.sql`update quota_usage set used = used + 8`
  await refused()
  t.equal(refusals(), 1, 'the refusal counted once')
  t.equal(upstream.seen.length, 2, 'no upstream call for the refused one')
  t.same(await outcomes(t, s), ['ok', 'ok'], 'a refusal before the call is no completion')
})
