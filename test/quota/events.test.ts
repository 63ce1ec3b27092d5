import { Webhook } from 'standardwebhooks'
import t from 'tap'
import * as v from 'valibot'
import { EVENT_ENVELOPES } from '../../src/outbox/catalogue.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { eventually } from '../support/eventually.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// quota.warning at 80% of the month's AI quota and quota.exhausted at 100%: written in the transaction of the spend
// that crossed the line, each once per account and month, delivered signed to the account's endpoints.

t.test('a FREE account of 5: warning at the 4th answer, exhausted at the 5th, nothing more', async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const s = await startTestServer(
    t,
    {
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: upstream.url,
      STUDIO_QUOTA_FREE: '5',
      STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true',
    },
    { webhooks: { pollMs: 20 } }
  )
  const key = await s.key({ email: 'alerts@example.com' })
  const [{ account_id: accountId }] = await s.db.sql<{ account_id: string }[]>`
    select account_id from users where email = 'alerts@example.com'`
  const r = await receiver(t)
  const endpoint = await addEndpoint(
    s.db.sql,
    { accountId, url: r.url, events: ['quota.warning', 'quota.exhausted'] },
    true
  )
  const post = () =>
    s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'hi' }] } })

  for (let i = 0; i < 3; i++) t.equal((await post()).status, 200)
  t.equal((await post()).status, 200, 'the 4th: 80% used')
  await eventually(() => r.got.length >= 1, { what: 'the warning delivered' })
  for (let i = 0; i < 2; i++) t.equal((await post()).status, i ? 429 : 200)
  await eventually(() => r.got.length >= 2, { what: 'the exhaustion delivered' })

  const month = new Date().toISOString().slice(0, 7)
  const events = r.got.map((got) =>
    new Webhook(endpoint.secret).verify(got.body, got.headers as Record<string, string>)
  )
  t.match(events, [
    { type: 'quota.warning', data: { month, plan: 'FREE', limit: 5, used: 4 } },
    { type: 'quota.exhausted', data: { month, plan: 'FREE', limit: 5, used: 5 } },
  ])
  for (const e of events as { type: 'quota.warning' }[])
    t.ok(v.is(EVENT_ENVELOPES[e.type], e), `${e.type} is what the OpenAPI document declares`)

  t.equal((await post()).status, 429)
  const [{ n }] = await s.db.sql<
    { n: number }[]
  >`select count(*)::int as n from events where account_id = ${accountId} and type like 'quota.%'`
  t.equal(n, 2, 'each once this month')
})
