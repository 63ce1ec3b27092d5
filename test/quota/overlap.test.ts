import t from 'tap'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'

// The reservation runs alongside the upstream call only when this process knows (from two answers) that units are
// left: a refusal then (another process spent the rest) aborts the call and answers 429; before that, and once
// another process is seen spending, the reservation comes first and a refusal never reaches the upstream.
t.test('a reservation refused while the call runs aborts it; then nothing reaches the upstream', async (t) => {
  const slow = json(200, anthropicMessage())
  const upstream = await fakeUpstream(t, (req, res, seen) => setTimeout(() => slow(req, res, seen), 300))
  const s = await startTestServer(t, {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_QUOTA_FREE: '10',
  })
  const key = await s.key({ email: 'overlap@example.com' })
  const post = () =>
    s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'hi' }] } })

  t.equal((await post()).status, 200, 'the first call (nothing known yet) reserves first and is answered')
  t.equal((await post()).status, 200, 'the second (one answer is not trusted yet) too')
  t.equal(upstream.seen.length, 2)

  // Another process spends the eight units this one believes are left.
  await s.db.sql`update quota_usage set used = 10`
  const r = await post()
  t.equal(r.status, 429)
  t.equal(((await r.json()) as any).error.code, 'quota_exceeded')
  t.equal(upstream.seen.length, 3, 'the call had started alongside the reservation')
  await upstream.settled()
  t.equal(upstream.seen[2].aborted, true, 'and was aborted by the refusal')

  t.equal((await post()).status, 429)
  t.equal(upstream.seen.length, 3, 'another process seen spending: refused before any upstream call')

  const [{ used }] = await s.db.sql`select used from quota_usage`
  t.equal(used, 10, 'nothing was charged for the refused calls')
  const outcomes = await eventually(async () => {
    const rows = await s.db.sql<{ outcome: string }[]>`select outcome from completions order by created_at`
    return rows.length >= 3 && rows
  })
  t.same(
    outcomes.map((o) => o.outcome),
    ['ok', 'ok', 'quota_exceeded'],
    'the aborted call is recorded'
  )
})
