import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { rotateKey } from '../../src/accounts/key-lifecycle.js'
import { setKeyLimits } from '../../src/accounts/key-limits.js'
import { prefixOf } from '../../src/accounts/key-format.js'
import { run } from '../../src/cli/cli.js'
import { anthropicMessage, anthropicStream, fakeUpstream, json, sse } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'

const dbEnv = await testDatabase(t)
const hello = { messages: [{ role: 'user', content: 'hi' }] }
const post = (url: string, key: string, body: object = hello) =>
  fetch(`${url}/api/v1/ai/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
const email = () => `cap-${Math.random().toString(36).slice(2)}@example.com`

// A FREE account's key (100 completions a month) with a cap of its own, over this process and a spawned one.
async function twoProcesses(t: Test, cap: number, behaviour: Parameters<typeof fakeUpstream>[1]) {
  const upstream = await fakeUpstream(t, behaviour)
  // A generous database deadline: a busy machine (the embedded database most of all) must not answer 503 here.
  const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url, STUDIO_DB_TIMEOUT_MS: '60000' }
  const a = await startTestServer(t, env, { dbEnv })
  const b = await spawnServer(t, { ...dbEnv, ...env })
  const key = await a.key({ email: email(), limits: { monthlyCompletions: cap } })
  return { upstream, a, b, key }
}

async function burst(urls: string[], key: string, n: number, body: object = hello) {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      post(urls[i % urls.length], key, body).then(async (r) => ({ status: r.status, text: await r.text() }))
    )
  )
}
const codeOf = (text: string) => JSON.parse(text).error.code

t.test("200 concurrent completions at a key's cap of 30, two processes: exactly 30 answered", async (t) => {
  const answer = json(200, anthropicMessage())
  const { upstream, a, b, key } = await twoProcesses(t, 30, (req, res, seen) =>
    setTimeout(() => answer(req, res, seen), 20)
  )
  const results = await burst([a.url, b.url], key, 200)
  const refused = results.filter((r) => r.status === 429)
  t.equal(results.filter((r) => r.status === 200).length, 30)
  t.equal(refused.length, 170)
  t.ok(
    refused.every((r) => codeOf(r.text) === 'key_quota_exceeded'),
    'every refusal is the key cap'
  )
  t.equal(upstream.seen.length, 30, 'the upstream saw exactly 30 calls')
  const [{ used }] = await a.db.sql`select used from quota_key_usage where prefix = ${prefixOf(key)}`
  t.equal(used, 30)
  const [{ used: account }] = await a.db
    .sql`select q.used from quota_usage q join api_keys k on k.account_id = q.account_id where k.prefix = ${prefixOf(key)}`
  t.equal(account, 30, "the account's quota counted the same answers")
  const e = JSON.parse(refused[0].text).error
  t.equal(e.details.limit, 30)
  t.equal(e.details.used, 30)
  t.equal(new Date(e.details.resets_at).getUTCDate(), 1)
  const again = await post(a.url, key)
  t.equal(again.status, 429)
  t.ok(Number(again.headers.get('retry-after')) > 0, 'Retry-After runs to the reset')
  const me = (await (await a.fetch('/api/v1/me', { key })).json()) as any
  t.match(me.quota, { limit: 100, used: 30 }, "the account's figures")
  await b.stop()
})

t.test("streams at a key's cap of 30, two processes: exactly 30 streamed", async (t) => {
  const { a, b, key } = await twoProcesses(t, 30, sse(anthropicStream()))
  const results = await burst([a.url, b.url], key, 120, { ...hello, stream: true })
  t.equal(results.filter((r) => r.status === 200 && r.text.includes('event: done\n')).length, 30)
  const refused = results.filter((r) => r.status === 429)
  t.equal(refused.length, 90)
  t.ok(
    refused.every((r) => codeOf(r.text) === 'key_quota_exceeded'),
    'refusals are JSON errors'
  )
  await b.stop()
})

t.test("a key's cap above the plan's quota: the account's quota still holds exactly", async (t) => {
  const answer = json(200, anthropicMessage())
  const { upstream, a, b, key } = await twoProcesses(t, 1000, (req, res, seen) =>
    setTimeout(() => answer(req, res, seen), 20)
  )
  const results = await burst([a.url, b.url], key, 200)
  const refused = results.filter((r) => r.status === 429)
  t.equal(results.filter((r) => r.status === 200).length, 100)
  t.equal(refused.length, 100)
  t.ok(
    refused.every((r) => codeOf(r.text) === 'quota_exceeded'),
    "every refusal is the account's quota"
  )
  t.equal(upstream.seen.length, 100)
  const [{ used }] = await a.db.sql`select used from quota_key_usage where prefix = ${prefixOf(key)}`
  t.equal(used, 100, 'the key counted what it was answered, no more')
  await b.stop()
})

t.test('the lower of the two applies, before and after a plan change; other keys keep the plan', async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const s = await startTestServer(
    t,
    { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url, STUDIO_QUOTA_FREE: '2' },
    { dbEnv }
  )
  const owner = email()
  const capped = await s.key({ email: owner, limits: { monthlyCompletions: 3 } })
  t.equal((await post(s.url, capped)).status, 200)
  t.equal((await post(s.url, capped)).status, 200)
  const plan = await post(s.url, capped)
  t.equal(plan.status, 429)
  t.equal(((await plan.json()) as any).error.code, 'quota_exceeded', 'the plan (2) is lower than the cap (3)')

  const quiet = { out: () => {}, err: () => {} }
  t.equal(await run(['plan', 'set', '--email', owner, 'STARTER'], { ...dbEnv }, quiet), 0)
  t.equal((await post(s.url, capped)).status, 200, 'the new plan applies to the next request')
  const cap = await post(s.url, capped)
  t.equal(cap.status, 429)
  t.same(((await cap.json()) as any).error.details.limit, 3, 'now the cap (3) is the lower')
  const other = await s.key({ email: owner })
  t.equal((await post(s.url, other)).status, 200, 'a key without a cap of its own has only the plan')
  const [row] = await s.db.sql`select rate_limit, monthly_completions from api_keys where prefix = ${prefixOf(other)}`
  t.same(row, { rate_limit: null, monthly_completions: null }, 'a key made without limits has none')
})

t.test("a cap set later counts the month's answers so far; lifting it lets the key go on", async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url }
  const s = await startTestServer(t, env, { dbEnv })
  const key = await s.key({ email: email() })
  const prefix = prefixOf(key)
  for (let i = 0; i < 3; i++) t.equal((await post(s.url, key)).status, 200)
  await eventually(async () => (await s.db.sql`select 1 from completions where key_prefix = ${prefix}`).length === 3)
  t.match(await setKeyLimits(s.db.sql, { prefix, change: { monthlyCompletions: 4 } }), { ok: true })
  // A process that starts now has not cached the key (a running one drops it within its poll).
  const fresh = await startTestServer(t, env, { dbEnv })
  t.equal((await post(fresh.url, key)).status, 200, 'one more within the cap of 4')
  const over = await post(fresh.url, key)
  t.equal(over.status, 429)
  t.match(((await over.json()) as any).error.details, { limit: 4, used: 4 })
  const rotated = await rotateKey(s.db.sql, { prefix, graceSeconds: 0 })
  const next = await startTestServer(t, env, { dbEnv })
  const again = await post(next.url, rotated!.key)
  t.equal(again.status, 429, 'a rotated key carries what the old one spent')
  t.match(((await again.json()) as any).error.details, { limit: 4, used: 4 })
  t.match(await setKeyLimits(s.db.sql, { prefix: rotated!.prefix, change: { monthlyCompletions: null } }), { ok: true })
  const third = await startTestServer(t, env, { dbEnv })
  t.equal((await post(third.url, rotated!.key)).status, 200, 'no cap: the plan only')
})

t.test('while a rotated key is in its grace period, the old and the new key share one count', async (t) => {
  const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
  const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: upstream.url }
  const s = await startTestServer(t, env, { dbEnv })
  const first = await s.key({ email: email(), limits: { monthlyCompletions: 4 } })
  for (let i = 0; i < 2; i++) t.equal((await post(s.url, first)).status, 200)
  const second = await rotateKey(s.db.sql, { prefix: prefixOf(first), graceSeconds: 3600 })
  const third = await rotateKey(s.db.sql, { prefix: second!.prefix, graceSeconds: 3600 })
  // A process that starts now has cached none of the three keys.
  const fresh = await startTestServer(t, env, { dbEnv })
  const keys = [first, second!.key, third!.key]
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      post(fresh.url, keys[i % 3]).then(async (r) => ({ status: r.status, text: await r.text() }))
    )
  )
  t.same(
    results.map((r) => r.status).sort(),
    [200, 200, 429, 429, 429, 429],
    'two more answers between the three keys, not two for each'
  )
  for (const r of results.filter((r) => r.status === 429))
    t.match(JSON.parse(r.text).error, { code: 'key_quota_exceeded', details: { limit: 4, used: 4 } })
  t.equal(upstream.seen.length, 4, 'the upstream saw four calls in all')
  const rows = await s.db
    .sql`select prefix, counts_as from api_keys where prefix = any(${[prefixOf(first), second!.prefix]})`
  t.ok(
    rows.every((r) => r.counts_as === third!.prefix),
    'both older keys count as the newest'
  )
})

t.test('a batch on the old key after a rotation lands in the one count, and holds move with it', async (t) => {
  const s = await startTestServer(t, {}, { dbEnv })
  const sql = s.db.sql
  const first = prefixOf(await s.key({ email: email(), limits: { monthlyCompletions: 4 } }))
  const process = randomUUID()
  await sql`insert into quota_processes (id, expires_at) values (${process}, now() + interval '1 minute')`
  // A process that knows only the old key (its cache a poll behind, or its call begun before the rotation).
  const apply = async (prefix: string, reserve: number, spend: number) => {
    const [r] = await sql`select granted, spent, used, quota_limit from studio_quota_key_apply(${prefix},
      date_trunc('month', now() at time zone 'UTC')::date, ${process}, ${reserve}, ${spend}, 0, 0)`
    return r
  }
  t.match(await apply(first, 2, 0), { granted: 2, used: 0 }, 'two units held ahead for the old key')
  const second = (await rotateKey(sql, { prefix: first, graceSeconds: 3600 }))!.prefix
  const holds = await sql`select prefix, units from quota_key_holds where process_id = ${process}`
  t.same(holds, [{ prefix: second, units: 2 }], 'the holds moved to the new key')
  t.match(await apply(first, 0, 2), { spent: 2, used: 2, quota_limit: 4 }, 'spent from the moved holds')
  t.match(await apply(first, 5, 0), { granted: 2, used: 2 }, 'only what is left of the one cap')
  t.match(await apply(second, 1, 0), { granted: 0 }, 'nothing left for the new key either')
  const [row] = await sql`select used from quota_key_usage
    where prefix = ${second} and month = date_trunc('month', now() at time zone 'UTC')::date`
  t.equal(row.used, 2, "the new key's count has every unit spent through the old one")

  await t.rejects(
    rotateKey(sql, { prefix: first, graceSeconds: 0 }),
    /was rotated; rotate .* instead/,
    'only the newest key is rotated'
  )
  const limited = await setKeyLimits(sql, {
    prefix: first,
    change: { monthlyCompletions: 10 },
    actor: { kind: 'cli', osUser: 'test' },
  })
  t.match(limited, { ok: true, before: { monthlyCompletions: 4 }, after: { monthlyCompletions: 10 } })
  const caps = await sql`select prefix, monthly_completions from api_keys where prefix in (${first}, ${second})`
  t.ok(
    caps.every((c) => c.monthly_completions === 10),
    'a limit set through the old key is the line'
  )
  const [entry] = await sql`select target from audit_log where action = 'key.limited' order by id desc limit 1`
  t.equal(entry.target, second, "the audit entry names the line's newest key")
})
