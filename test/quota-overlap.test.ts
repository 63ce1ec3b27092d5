import t from 'tap'
import { anthropicMessage, fakeUpstream, json } from './fake-upstream.js'
import { startTestServer } from './helpers.js'

// The reservation runs alongside the upstream call only when this process knows units are left: a refusal then
// (another process spent the rest) aborts the call and answers 429; once the account is known to be at its limit,
// or before anything is known, the reservation comes first and a refusal never reaches the upstream.
t.test('a reservation refused while the call runs aborts it; at the limit nothing reaches the upstream', async (t) => {
  const slow = json(200, anthropicMessage())
  const upstream = await fakeUpstream(t, (req, res, seen) => setTimeout(() => slow(req, res, seen), 300))
  const s = await startTestServer(t, {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_QUOTA_FREE: '3',
  })
  const key = await s.key({ email: 'overlap@example.com' })
  const post = () =>
    s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'hi' }] } })

  t.equal((await post()).status, 200, 'the first call (nothing known yet) reserves first and is answered')
  t.equal(upstream.seen.length, 1)

  // Another process spends the two units this one believes are left.
  await s.db.sql`update quota_usage set used = 3`
  const r = await post()
  t.equal(r.status, 429)
  t.equal(((await r.json()) as any).error.code, 'quota_exceeded')
  t.equal(upstream.seen.length, 2, 'the call had started alongside the reservation')
  await upstream.settled()
  t.equal(upstream.seen[1].aborted, true, 'and was aborted by the refusal')

  t.equal((await post()).status, 429)
  t.equal(upstream.seen.length, 2, 'known to be at the limit: refused before any upstream call')

  const [{ used }] = await s.db.sql`select used from quota_usage`
  t.equal(used, 3, 'nothing was charged for the refused calls')
  let outcomes: { outcome: string }[] = []
  for (let i = 0; i < 50 && outcomes.length < 2; i++) {
    await new Promise((ok) => setTimeout(ok, 100))
    outcomes = await s.db.sql`select outcome from completions order by created_at`
  }
  t.same(
    outcomes.map((o) => o.outcome),
    ['ok', 'quota_exceeded'],
    'the aborted call is recorded'
  )
})
