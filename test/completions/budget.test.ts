import t, { type Test } from 'tap'
import { prefixOf } from '../../src/accounts/key-format.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { cliOn } from '../support/cli.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'
import { receiver } from '../support/receiver.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { BOUND, body, COST, usage, usd } from '../support/budget-call.js'

// A monthly budget in USD: each call reserves its upper bound before its upstream call (docs/spend.md) and settles
// its cost after; what does not fit is refused with budget_exceeded, and two processes sharing the database never
// spend more than the budget between them.

const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const email = () => `budget-${Math.random().toString(36).slice(2)}@example.com`
const post = (url: string, key: string, json: object = body) =>
  fetch(`${url}/api/v1/ai/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  })

async function server(t: Test, delayMs = 0) {
  const answer = json(200, anthropicMessage({ usage }))
  const upstream = await fakeUpstream(t, (req, res, seen) => setTimeout(() => answer(req, res, seen), delayMs))
  const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url, STUDIO_DB_TIMEOUT_MS: '60000' }
  const a = await startTestServer(t, env, { dbEnv })
  return { upstream, a, env }
}

async function budgeted(a: Awaited<ReturnType<typeof server>>['a'], budget: string) {
  const address = email()
  const key = await a.key({ email: address })
  const set = await cli(['plan', 'set', '--email', address, 'ENTERPRISE'])
  t.equal(set.code, 0)
  const r = await cli(['budget', 'set', '--email', address, budget])
  t.equal(r.code, 0, r.err.join('\n'))
  return { key, address }
}

const spentOf = async (a: Awaited<ReturnType<typeof server>>['a'], key: string) => {
  const [row] = await a.db.sql<{ spent: string }[]>`
    select s.spent_micros::text as spent from account_spend s join api_keys k using (account_id)
    where k.prefix = ${prefixOf(key)}`
  return Number(row?.spent ?? 0)
}

t.test('a call that does not fit is refused before the upstream; one that fits settles its cost', async (t) => {
  const { upstream, a } = await server(t)
  const { key, address } = await budgeted(a, usd(BOUND + COST - 1))
  const ok = await post(a.url, key)
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('x-studio-cost-usd'), usd(COST))
  await eventually(async () => (await spentOf(a, key)) === COST || undefined, { what: 'the cost settled' })
  const refused = await post(a.url, key)
  t.equal(refused.status, 429)
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After runs to the reset')
  const e = ((await refused.json()) as any).error
  t.equal(e.code, 'budget_exceeded')
  t.match(e.details, { budget: usd(BOUND + COST - 1), spent: usd(COST), reserved: usd(0) })
  t.equal(new Date(e.details.resets_at).getUTCDate(), 1)
  t.equal(upstream.seen.length, 1, 'the refused call never reached the upstream')
  const me = (await (await a.fetch('/api/v1/me', { key })).json()) as any
  t.match(me.spend, { budget: usd(BOUND + COST - 1), spent: usd(COST), reserved: usd(0), remaining: usd(BOUND - 1) })
  t.equal((await cli(['budget', 'set', '--email', address, 'none'])).code, 0, 'lifted')
  t.equal((await post(a.url, key)).status, 200)
})

// An image by URL is a few bytes of JSON but thousands of tokens upstream: the bound counts it at its most
// (IMAGE_TOKENS_MAX), so a budget that two text calls' bounds fit refuses one call with an image.
t.test('an image by URL counts at its most in the bound', async (t) => {
  const { upstream, a } = await server(t)
  const { key } = await budgeted(a, usd(2 * BOUND))
  const image = { type: 'image', source: { type: 'url', url: 'https://images.example/cat.png' } }
  const withImage = {
    model: 'primary',
    max_tokens: 1000,
    messages: [{ role: 'user', content: [image, { type: 'text', text: 'hi' }] }],
  }
  const r = await fetch(`${a.url}/api/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(withImage),
  })
  t.equal(r.status, 429, 'its bound does not fit')
  t.equal(upstream.seen.length, 0, 'the upstream was not called')
  t.equal((await post(a.url, key)).status, 200, 'a text call fits')
})

t.test('a call under way holds its upper bound, shown as reserved', async (t) => {
  const { a } = await server(t, 400)
  const { key } = await budgeted(a, '100.00')
  const call = post(a.url, key)
  await eventually(
    async () => {
      const me = (await (await a.fetch('/api/v1/me', { key })).json()) as any
      return me.spend.reserved === usd(BOUND) || undefined
    },
    { what: 'the bound reserved' }
  )
  t.equal((await call).status, 200)
  await eventually(
    async () => {
      const [{ held }] = await a.db.sql<{ held: string }[]>`
        select coalesce(sum(micros), 0)::text as held from budget_holds h join api_keys k using (account_id)
        where k.prefix = ${prefixOf(key)}`
      return held === '0' || undefined
    },
    { what: 'the hold released with the record' }
  )
  t.equal(await spentOf(a, key), COST)
})

t.test('with a budget, a model without a price is refused, naming the model and STUDIO_PRICES', async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage({ usage })))
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_MODEL_PRIMARY: 'my-unpriced-model',
  }
  const a = await startTestServer(t, env, { dbEnv })
  const { key } = await budgeted(a, '5.00')
  const res = await post(a.url, key)
  t.equal(res.status, 503)
  const e = ((await res.json()) as any).error
  t.match(e.message, /my-unpriced-model.*STUDIO_PRICES/)
  t.equal(upstream.seen.length, 0)
})

t.test('the CLI refuses a bad amount in one line, exit 2', async (t) => {
  const r = await cli(['budget', 'set', '--email', email(), '12.3.4'])
  t.equal(r.code, 2)
  t.match(r.err[0], /^studio: .*not an amount in USD/)
  const none = await cli(['budget', 'set', '--email', email(), '5.00'])
  t.not(none.code, 0, 'no such user')
})

t.test('50 concurrent calls over two processes against a budget that fits 10', async (t) => {
  const { upstream, a, env } = await server(t, 50)
  const b = await spawnServer(t, { ...dbEnv, ...env })
  const budget = 10 * BOUND + 100
  const { key } = await budgeted(a, usd(budget))
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      post([a.url, b.url][i % 2], key).then(async (r) => ({ status: r.status, text: await r.text() }))
    )
  )
  const answered = results.filter((r) => r.status === 200)
  const refused = results.filter((r) => r.status !== 200)
  t.equal(answered.length, 10, 'exactly the calls the budget fits')
  t.ok(
    refused.every((r) => r.status === 429 && JSON.parse(r.text).error.code === 'budget_exceeded'),
    'the rest are budget_exceeded'
  )
  t.equal(upstream.seen.length, 10, 'the upstream saw only the answered calls')
  await eventually(async () => (await spentOf(a, key)) === 10 * COST || undefined, { what: 'all costs recorded' })
  const [{ sum }] = await a.db.sql<{ sum: string }[]>`
    select sum(cost_micros)::text as sum from completions where key_prefix = ${prefixOf(key)} and outcome = 'ok'`
  t.equal(Number(sum), await spentOf(a, key), 'the recorded spend is the sum of the answered calls')
  t.ok((await spentOf(a, key)) <= budget)
})

t.test('budget.warning at 80% and budget.exhausted at the first refusal, each once', async (t) => {
  const answer = json(200, anthropicMessage({ usage }))
  const upstream = await fakeUpstream(t, answer)
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true',
  }
  const a = await startTestServer(t, env, { dbEnv, webhooks: { pollMs: 20 } })
  // Fits 5 bounds: the 5th answer's spend crosses 80% of it (4 × COST falls short), the 6th call is refused (the
  // spend alone never reaches 100%: each answer cost less than its bound).
  const { key, address } = await budgeted(a, usd(5 * BOUND))
  const [{ account_id: accountId }] = await a.db.sql<{ account_id: string }[]>`
    select account_id from users where email = ${address}`
  const r = await receiver(t)
  await addEndpoint(a.db.sql, { accountId, url: r.url, events: ['budget.warning', 'budget.exhausted'] }, true)
  const statuses: number[] = []
  for (let i = 0; i < 7; i++) {
    statuses.push((await post(a.url, key)).status)
    await eventually(async () => (await spentOf(a, key)) === Math.min(i + 1, 5) * COST || undefined, {
      what: 'the cost settled',
    })
  }
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429])
  await eventually(() => r.got.length >= 2, { what: 'both events delivered' })
  const month = new Date().toISOString().slice(0, 7)
  const events = r.got.map((got) => JSON.parse(got.body))
  t.match(events, [
    { type: 'budget.warning', data: { month, budget: usd(5 * BOUND), spent: usd(5 * COST) } },
    { type: 'budget.exhausted', data: { month, budget: usd(5 * BOUND), spent: usd(5 * COST) } },
  ])
  const [{ n }] = await a.db.sql<{ n: number }[]>`
    select count(*)::int as n from events where account_id = ${accountId} and type like 'budget.%'`
  t.equal(n, 2, 'each once this month')
})
