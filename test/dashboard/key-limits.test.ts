import t from 'tap'
import { prefixOf } from '../../src/accounts/key-format.js'
import { cliOn } from '../support/cli.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { startTestServer } from '../support/server.js'

// A key's own limits on the dashboard: each key's use this month against its cap; owners and admins set, change and
// lift them with a plain form, the model aliases a key may call included (at creation too); bad input gets an HTML
// page (never a 500) and changes nothing.
const dbEnv = await testDatabase(t)
const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
const env = {
  ANTHROPIC_API_KEY: 'sk-test',
  ANTHROPIC_BASE_URL: upstream.url,
  STUDIO_MODEL_ALIASES: 'coder=anthropic:claude-sonnet-4-5',
}
const server = await startTestServer(t, env, { dbEnv })
const { sql } = await openTestDatabase(t, dbEnv)
const cli = cliOn(dbEnv)
const OWNER = 'limits-owner@example.com'
const owner = await signInWithLink(server.url, await signinLink(dbEnv, {}, ['--email', OWNER]))
const made = await cli(['keys', 'create', '--email', OWNER, '--rate-limit', '20', '--monthly-completions', '30'])
const capped = made.key
const prefix = prefixOf(capped)
const limitsOf = async () =>
  (await sql`select rate_limit, monthly_completions from api_keys where prefix = ${prefix}`)[0]
const rowOf = (page: string) => {
  const at = page.indexOf(`<code>${prefix}</code>`)
  return page.slice(at, page.indexOf('</tr>', at))
}

t.test('the list shows use this month against the cap, and the rate limit', async (t) => {
  for (let i = 0; i < 2; i++)
    t.equal(
      (
        await server.fetch('/api/v1/ai/completions', {
          method: 'POST',
          key: capped,
          json: { messages: [{ role: 'user', content: 'hi' }] },
        })
      ).status,
      200
    )
  const page = await owner.get('/dashboard/keys')
  t.equal(page.status, 200)
  t.match(page.text, '<th>Completions this month</th>')
  t.match(rowOf(page.text), '2 / 30')
  t.match(rowOf(page.text), '20 a minute')
  t.match(rowOf(page.text), `href="/dashboard/keys/${prefix}/limits"`)
})

t.test('an owner changes and lifts them with the form', async (t) => {
  const form = await owner.get(`/dashboard/keys/${prefix}/limits`)
  t.equal(form.status, 200)
  t.match(form.text, /name="rate_limit"[^>]*value="20"/)
  t.match(form.text, /name="monthly_completions"[^>]*value="30"/)
  const saved = await owner.submit(`/dashboard/keys/${prefix}/limits`, `/dashboard/keys/${prefix}/limits`, {
    rate_limit: '',
    monthly_completions: '5',
  })
  t.equal(saved.status, 303)
  t.equal(saved.headers.get('location'), '/dashboard/keys?done=limited')
  t.same(await limitsOf(), { rate_limit: null, monthly_completions: 5 })
  const page = (await owner.get('/dashboard/keys?done=limited')).text
  t.match(page, 'limits were saved')
  t.match(rowOf(page), '2 / 5')
  t.notMatch(rowOf(page), 'a minute')
  await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, {
    rate_limit: 'none',
    monthly_completions: '',
  })
  t.same(await limitsOf(), { rate_limit: null, monthly_completions: null })
  // Without a cap the count is the completions recorded, which the recorder writes a moment after each answer.
  const shown = async () => rowOf((await owner.get('/dashboard/keys')).text).includes('2 <small>(no cap)</small>')
  await eventually(shown, { what: 'the recorded completions counted under no cap' })
})

t.test('tokens per minute: set with the form, shown in the list, refused when bad, lifted', async (t) => {
  const tpm = async () =>
    (await sql`select tokens_per_minute from api_keys where prefix = ${prefix}`)[0].tokens_per_minute
  const saved = await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, {
    rate_limit: '',
    monthly_completions: '',
    tokens_per_minute: '40000',
  })
  t.equal(saved.status, 303)
  t.equal(await tpm(), 40000)
  t.match((await owner.get(`/dashboard/keys/${prefix}/limits`)).text, /name="tokens_per_minute"[^>]*value="40000"/)
  t.match(rowOf((await owner.get('/dashboard/keys')).text), '40000 tokens a minute')
  const bad = await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, { tokens_per_minute: '0' })
  t.equal(bad.status, 400)
  t.match(bad.text, 'Tokens per minute')
  t.equal(await tpm(), 40000, 'nothing changed')
  await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, { tokens_per_minute: '' })
  t.equal(await tpm(), null, 'lifted')
})

t.test('bad input: an HTML page saying what is wrong, never a 500, and nothing changes', async (t) => {
  await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, {
    rate_limit: '7',
    monthly_completions: '9',
  })
  for (const [form, message] of [
    [{ rate_limit: 'fast', monthly_completions: '' }, 'Rate limit'],
    [{ rate_limit: '0', monthly_completions: '' }, 'at least 1'],
    [{ rate_limit: '-5', monthly_completions: '' }, 'Rate limit'],
    [{ rate_limit: '', monthly_completions: '1.5' }, 'Monthly completions cap'],
    [{ rate_limit: '', monthly_completions: '99999999999' }, 'Monthly completions cap'],
    [{ rate_limit: '', monthly_completions: '<script>' }, 'Monthly completions cap'],
  ] as const) {
    const r = await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, form)
    t.equal(r.status, 400, JSON.stringify(form))
    t.match(r.headers.get('content-type'), /^text\/html/)
    t.match(r.text, message)
    t.notMatch(r.text, '<script>')
  }
  const gone = await owner.submit('/dashboard/keys', '/dashboard/keys/AAAAAAAAAAAA/limits', { rate_limit: '3' })
  t.equal(gone.status, 404)
  t.match(gone.headers.get('content-type'), /^text\/html/)
  t.same(await limitsOf(), { rate_limit: 7, monthly_completions: 9 }, 'nothing changed')
})

t.test("members cannot change limits; another account's key is not found", async (t) => {
  const page = (
    await owner.submit('/dashboard/team', '/dashboard/team', { email: 'limits-member@example.com', role: 'member' })
  ).text
  const link = /<code id="new-link">([^<]+)<\/code>/.exec(page)?.[1] ?? ''
  const member = await signInWithLink(server.url, link)
  // A key of the member's own, so that their list has a row whose Limits link could show.
  const created = (await member.submit('/dashboard/keys', '/dashboard/keys', { name: 'member key' })).text
  const own = prefixOf(/<code id="new-key">([^<]+)<\/code>/.exec(created)?.[1] ?? '')
  const list = (await member.get('/dashboard/keys')).text
  t.match(list, `<code>${own}</code>`)
  t.notMatch(list, '/limits"')
  for (const target of [own, prefix]) {
    t.equal((await member.get(`/dashboard/keys/${target}/limits`)).status, 403)
    const r = await member.submit('/dashboard/keys', `/dashboard/keys/${target}/limits`, { rate_limit: '1' })
    t.equal(r.status, 403)
  }
  t.same((await sql`select rate_limit from api_keys where prefix = ${own}`)[0], { rate_limit: null })
  const other = await cli(['keys', 'create', '--email', 'limits-other@example.com'])
  const foreign = `/dashboard/keys/${prefixOf(other.key)}/limits`
  t.equal((await owner.get(foreign)).status, 404)
  t.equal((await owner.submit('/dashboard/keys', foreign, { rate_limit: '1' })).status, 404)
  t.same((await sql`select rate_limit from api_keys where prefix = ${prefixOf(other.key)}`)[0], { rate_limit: null })
  t.same(await limitsOf(), { rate_limit: 7, monthly_completions: 9 })
})

const modelsOf = async (p: string) => (await sql`select models from api_keys where prefix = ${p}`)[0].models
const complete = (key: string, model: string) =>
  server.fetch('/api/v1/ai/completions', {
    method: 'POST',
    key,
    json: { model, messages: [{ role: 'user', content: 'hi' }] },
  })

t.test('models: an owner limits a key to some aliases and lifts the limit', async (t) => {
  // No rate limit or cap of the key's own meanwhile: the checks below poll with completions.
  const form = (await owner.get(`/dashboard/keys/${prefix}/limits`)).text
  t.match(form, /name="models" value="all" checked/)
  for (const alias of ['primary', 'fast', 'coder']) t.match(form, `name="model" value="${alias}">`)
  const limits = { rate_limit: '', monthly_completions: '' }
  const some = { ...limits, models: 'some', model: ['coder', 'fast'] }
  const saved = await owner.submit(`/dashboard/keys/${prefix}/limits`, `/dashboard/keys/${prefix}/limits`, some)
  t.equal(saved.status, 303)
  t.same(await modelsOf(prefix), ['fast', 'coder'])
  t.match(rowOf((await owner.get('/dashboard/keys')).text), 'models <code>fast</code> <code>coder</code>')
  const again = (await owner.get(`/dashboard/keys/${prefix}/limits`)).text
  t.match(again, /name="models" value="some" checked/)
  t.match(again, /name="model" value="fast" checked/)
  t.match(again, /name="model" value="primary">/)
  const refused = async () => (await complete(capped, 'primary')).status === 403
  await eventually(refused, { what: 'the running server applying the limit', interval: 200 })
  await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, { ...limits, models: 'all', model: 'fast' })
  t.equal(await modelsOf(prefix), null, 'All wins over boxes left checked')
  t.notMatch(rowOf((await owner.get('/dashboard/keys')).text), 'models')
  await eventually(async () => (await complete(capped, 'primary')).status === 200, {
    what: 'the limit lifted',
    interval: 200,
  })
})

t.test('models: the key form limits a new key; a form without the choice leaves them', async (t) => {
  const page = (await owner.get('/dashboard/keys')).text
  t.match(page, /name="models" value="all" checked/)
  const created = (
    await owner.submit('/dashboard/keys', '/dashboard/keys', { name: 'fast only', models: 'some', model: 'fast' })
  ).text
  const key = /<code id="new-key">([^<]+)<\/code>/.exec(created)?.[1] ?? ''
  t.same(await modelsOf(prefixOf(key)), ['fast'])
  t.equal((await complete(key, 'primary')).status, 403)
  t.equal((await complete(key, 'fast')).status, 200)
  const plain = (await owner.submit('/dashboard/keys', '/dashboard/keys', { name: 'no choice' })).text
  t.equal(await modelsOf(prefixOf(/<code id="new-key">([^<]+)<\/code>/.exec(plain)?.[1] ?? '')), null)
  await owner.submit('/dashboard/keys', `/dashboard/keys/${prefixOf(key)}/limits`, { rate_limit: '3' })
  t.same(await modelsOf(prefixOf(key)), ['fast'], 'a limits form without the choice leaves the models')
})

t.test('models: an alias not configured, or none checked, is an HTML page naming the configured ones', async (t) => {
  const before = await modelsOf(prefix)
  const limits = { rate_limit: '', monthly_completions: '' }
  const cases: [Record<string, string | string[]>, string][] = [
    [{ ...limits, models: 'some', model: 'gpt-4o' }, 'unknown model alias &quot;gpt-4o&quot;'],
    [{ ...limits, models: 'some', model: ['fast', '<script>'] }, 'unknown model alias'],
    [{ ...limits, models: 'some' }, 'no model alias named'],
    [{ ...limits, models: 'every' }, 'pick All or Only these'],
  ]
  for (const [form, message] of cases) {
    const r = await owner.submit('/dashboard/keys', `/dashboard/keys/${prefix}/limits`, form)
    t.equal(r.status, 400, JSON.stringify(form))
    t.match(r.headers.get('content-type'), /^text\/html/)
    t.match(r.text, message)
    if (message !== 'pick All or Only these') t.match(r.text, 'the configured aliases are primary, fast, coder')
    t.notMatch(r.text, '<script>')
  }
  const made = await owner.submit('/dashboard/keys', '/dashboard/keys', { name: 'bad', models: 'some', model: 'x' })
  t.equal(made.status, 400)
  t.match(made.text, 'unknown model alias')
  t.same(await modelsOf(prefix), before, 'nothing changed')
})

t.test('limits and a budget of one submit are saved in one transaction', async (t) => {
  const line = prefixOf((await cli(['keys', 'create', '--email', OWNER])).key)
  const saved = await owner.submit('/dashboard/keys', `/dashboard/keys/${line}/limits`, {
    rate_limit: '12',
    monthly_completions: '',
    budget: '3.50',
  })
  t.equal(saved.status, 303)
  const [key] = await sql`
    select rate_limit, budget_micros::int as budget, xmin::text as commit from api_keys where prefix = ${line}`
  t.match(key, { rate_limit: 12, budget: 3_500_000 })
  const entries = await sql`
    select action, xmin::text as commit from audit_log
    where target = ${line} and action in ('key.limited', 'key.budget_changed') order by id`
  const ofTheSubmit = ['key.limited', 'key.budget_changed'].map((action) => ({ action, commit: key.commit }))
  t.same([...entries], ofTheSubmit, 'the key and both entries written by one commit')
})
