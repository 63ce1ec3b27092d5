import type { ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { prefixOf } from '../../src/accounts/key-format.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { cliOn } from '../support/cli.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'
import { inviteMember } from '../../src/accounts/team.js'
import { BOUND, body, COST, usage, usd } from '../support/budget-call.js'
import { receiver } from '../support/receiver.js'
import { addEndpoint } from '../../src/events/endpoints.js'

// A key's own monthly budget (`studio keys limit PREFIX --budget`), beside its account's: one reservation holds a
// call's bound against both (sql/047), the budget that refuses a call is named, two processes never spend more than
// the key's budget between them, and a process killed with calls in flight gives its holds back within a lease.

const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const email = () => `key-budget-${Math.random().toString(36).slice(2)}@example.com`
const post = (url: string, key: string) =>
  fetch(`${url}/api/v1/ai/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(
    async (r) => ({ status: r.status, text: await r.text() }),
    () => ({ status: 0, text: 'connection lost' })
  )

async function server(t: Test, delayMs = 0, extra: Record<string, string> = {}) {
  const answer = json(200, anthropicMessage({ usage }))
  const upstream = await fakeUpstream(t, (req, res, seen) => setTimeout(() => answer(req, res, seen), delayMs))
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_DB_TIMEOUT_MS: '60000',
    STUDIO_RATE_LIMIT: '100000',
    ...extra,
  }
  const a = await startTestServer(t, env, { dbEnv })
  return { upstream, a, env }
}

async function enterpriseKey(a: Awaited<ReturnType<typeof server>>['a']) {
  const address = email()
  const key = await a.key({ email: address })
  t.equal((await cli(['plan', 'set', '--email', address, 'ENTERPRISE'])).code, 0)
  return { key, address }
}

const keyBudget = async (key: string, budget: string) => {
  const r = await cli(['keys', 'limit', prefixOf(key), '--budget', budget])
  t.equal(r.code, 0, r.err.join('\n'))
  return r
}

const keySpent = async (a: Awaited<ReturnType<typeof server>>['a'], key: string) => {
  const [row] = await a.db.sql<{ spent: string }[]>`
    select coalesce(sum(spent_micros), 0)::text as spent from key_spend where prefix = ${prefixOf(key)}`
  return Number(row.spent)
}

// What the key's line holds in live processes' reservations.
const keyHeld = async (a: Awaited<ReturnType<typeof server>>['a'], key: string) => {
  const [row] = await a.db.sql<{ held: string }[]>`
    select coalesce(sum(h.micros), 0)::text as held from key_budget_holds h
    join quota_processes p on p.id = h.process_id and p.expires_at > now() where h.prefix = ${prefixOf(key)}`
  return Number(row.held)
}

t.test("a key's budget refuses what does not fit it, named as the key's; set and lifted on a cached key", async (t) => {
  const { upstream, a } = await server(t)
  const { key, address } = await enterpriseKey(a)
  const other = await a.key({ email: address })
  t.equal((await post(a.url, key)).status, 200, 'no budget: answered (and the key cached)')
  const set = await keyBudget(key, usd(BOUND + COST - 1))
  t.match(set.out.join('\n'), `a monthly budget of ${usd(BOUND + COST - 1)} USD`)
  // The cached principal learns of the budget within a poll: until then a call may pass unreserved.
  await eventually(
    async () => {
      const r = await post(a.url, key)
      return r.status === 429 ? r : undefined
    },
    { what: "the key's budget applied" }
  ).then((refused) => {
    const e = JSON.parse(refused.text).error
    t.equal(e.code, 'budget_exceeded')
    t.equal(e.details.which, 'key', 'the key budget is named')
    t.equal(e.details.budget, usd(BOUND + COST - 1))
    t.match(e.message, /budget of this key/)
  })
  const seen = upstream.seen.length
  t.equal((await post(a.url, key)).status, 429)
  t.equal(upstream.seen.length, seen, 'a refused call never reaches the upstream')
  t.equal((await post(a.url, other)).status, 200, "another key of the account is not held by this key's budget")
  const [entry] = await a.db.sql<{ before: unknown; after: unknown }[]>`
    select before, after from audit_log where action = 'key.budget_changed' and target = ${prefixOf(key)}`
  t.same(entry, { before: { budget: null }, after: { budget: usd(BOUND + COST - 1) } }, 'audited')
  await keyBudget(key, 'none')
  await eventually(async () => (await post(a.url, key)).status === 200, { what: 'the budget lifted' })
})

t.test('the account budget set on a cached key applies within a poll, and both budgets are checked', async (t) => {
  const { a } = await server(t)
  const { key, address } = await enterpriseKey(a)
  t.equal((await post(a.url, key)).status, 200)
  t.equal((await cli(['budget', 'set', '--email', address, usd(COST + BOUND - 1)])).code, 0)
  await keyBudget(key, '100.00')
  const refused = await eventually(
    async () => {
      const r = await post(a.url, key)
      return r.status === 429 ? r : undefined
    },
    { what: "the account's budget applied" }
  )
  t.equal(JSON.parse(refused.text).error.details.which, 'account', "the account's budget is named")
  t.equal(await keyHeld(a, key), 0, 'a refused call holds nothing of the key budget')
})

t.test('a key made with --budget refuses, from its first calls, what does not fit it', async (t) => {
  const { upstream, a } = await server(t)
  const made = await cli(['keys', 'create', '--plan', 'ENTERPRISE', '--budget', usd(BOUND + COST - 1)])
  t.equal(made.code, 0, made.err.join('\n'))
  t.equal((await post(a.url, made.key)).status, 200, 'the first call fits')
  const refused = await post(a.url, made.key)
  t.equal(refused.status, 429)
  const e = JSON.parse(refused.text).error
  t.equal(e.code, 'budget_exceeded')
  t.equal(e.details.which, 'key')
  t.equal(upstream.seen.length, 1, 'the refused call never reached the upstream')
})

t.test('bad budgets are refused in one line, exit 2', async (t) => {
  const { a } = await server(t)
  const { key } = await enterpriseKey(a)
  const r = await cli(['keys', 'limit', prefixOf(key), '--budget', '5.0.0'])
  t.equal(r.code, 2)
  t.match(r.err[0], /^studio: --budget: "5.0.0" is not an amount in USD/)
  const none = await cli(['keys', 'limit', 'sk_nope', '--budget', '5.00'])
  t.not(none.code, 0)
})

t.test('200 concurrent calls over two processes against a key budget that fits 50', async (t) => {
  const { upstream, a, env } = await server(t, 50)
  const b = await spawnServer(t, { ...dbEnv, ...env })
  const { key, address } = await enterpriseKey(a)
  // The account's budget fits more than the key's: the key's is the one that binds.
  t.equal((await cli(['budget', 'set', '--email', address, usd(80 * BOUND)])).code, 0)
  const budget = 50 * BOUND + 100
  await keyBudget(key, usd(budget))
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => post([a.url, b.url][i % 2], key)))
  const answered = results.filter((r) => r.status === 200)
  const refused = results.filter((r) => r.status !== 200)
  t.equal(answered.length, 50, 'exactly the calls the key budget fits')
  t.ok(
    refused.every((r) => r.status === 429 && JSON.parse(r.text).error.details.which === 'key'),
    "the rest are budget_exceeded, the key's"
  )
  t.equal(upstream.seen.length, 50, 'the upstream saw only the answered calls')
  await eventually(async () => (await keySpent(a, key)) === 50 * COST || undefined, { what: 'all costs recorded' })
  t.ok((await keySpent(a, key)) <= budget, 'never more than the budget')
  await eventually(async () => (await keyHeld(a, key)) === 0 || undefined, { what: 'every hold released' })
  const [{ spent }] = await a.db.sql<{ spent: string }[]>`
    select s.spent_micros::text as spent from account_spend s join api_keys k using (account_id)
    where k.prefix = ${prefixOf(key)}`
  t.equal(Number(spent), 50 * COST, "the account's spend counts the same calls")
})

t.test('kill -9 with calls in flight: spent + reserved equals what the answered calls cost', async (t) => {
  const held: ServerResponse[] = []
  const upstream = await fakeUpstream(t, (_req, res) => held.push(res))
  const answer = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(anthropicMessage({ usage })))
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_QUOTA_LEASE_MS: '3000',
    STUDIO_RATE_LIMIT: '100000',
  }
  const a = await startTestServer(t, env, { dbEnv })
  const b = await spawnServer(t, { ...dbEnv, ...env })
  const { key, address } = await enterpriseKey(a)
  t.equal((await cli(['budget', 'set', '--email', address, '100.00'])).code, 0)
  await keyBudget(key, '50.00')
  const calls = Array.from({ length: 10 }, () => post(a.url, key))
  await eventually(() => held.length >= 10, { what: 'ten calls upstream through the survivor' })
  calls.push(...Array.from({ length: 10 }, () => post(b.url, key)))
  await eventually(() => held.length >= 20, { what: 'ten more through the process to be killed' })
  t.equal(await keyHeld(a, key), 20 * BOUND, 'each call in flight holds its bound')
  await b.stop('SIGKILL')
  for (const res of held.splice(0)) answer(res)
  const results = await Promise.all(calls)
  const delivered = results.filter((r) => r.status === 200).length
  t.equal(delivered, 10, "the survivor's calls answered, the killed process's cut off")
  const accountTotal = async () => {
    const [row] = await a.db.sql<{ total: string }[]>`
      select ((select coalesce(sum(spent_micros), 0) from account_spend s join api_keys k using (account_id)
               where k.prefix = ${prefixOf(key)}) +
              (select coalesce(sum(h.micros), 0) from budget_holds h join api_keys k using (account_id)
               join quota_processes p on p.id = h.process_id and p.expires_at > now()
               where k.prefix = ${prefixOf(key)}))::text as total`
    return Number(row.total)
  }
  const keyTotal = async () => (await keySpent(a, key)) + (await keyHeld(a, key))
  await eventually(
    async () => ((await keyTotal()) === delivered * COST && (await accountTotal()) === delivered * COST) || undefined,
    { what: 'spent + reserved = the answered calls, for the key and the account', timeout: 60_000 }
  )
  t.equal(await keyTotal(), delivered * COST)
  t.equal(await accountTotal(), delivered * COST)
})

// A server that sends mail and webhooks (to private addresses: the test's receivers), and an owner's key.
async function mailing(t: Test) {
  const smtp = await smtpServer(t)
  const upstream = await fakeUpstream(t, json(200, anthropicMessage({ usage })))
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_SMTP_URL: smtp.url,
    STUDIO_MAIL_FROM: 'Studio <studio@example.com>',
    STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true',
  }
  const a = await startTestServer(t, env, { dbEnv, webhooks: { pollMs: 20 } })
  const { key, address } = await enterpriseKey(a)
  const [{ account_id: accountId }] = await a.db.sql<{ account_id: string }[]>`
    select account_id from users where email = ${address}`
  return { smtp, a, key, address, accountId }
}

t.test("budget.warning and budget.exhausted mail the account's owners, once each", async (t) => {
  const { smtp, a, key, address, accountId } = await mailing(t)
  await inviteMember(a.db.sql, accountId, `admin-${address}`, 'admin')
  // As budget.test.ts: the 5th answer crosses 80%, the 6th call is refused (the budget exhausted).
  t.equal((await cli(['budget', 'set', '--email', address, usd(5 * BOUND)])).code, 0)
  const statuses: number[] = []
  for (let i = 0; i < 7; i++) {
    statuses.push((await post(a.url, key)).status)
    await eventually(
      async () => {
        const [row] = await a.db.sql<{ spent: string }[]>`
          select spent_micros::text as spent from account_spend where account_id = ${accountId}`
        return Number(row?.spent ?? 0) === Math.min(i + 1, 5) * COST || undefined
      },
      { what: 'the cost settled' }
    )
  }
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429])
  const mails = () => smtp.to(address)
  await eventually(() => mails().length >= 2, { what: 'both mails' })
  const subjects = mails().map((m) => m.subject)
  t.same(
    subjects,
    ['Your account has spent 80% of its monthly budget', "Your account's monthly budget is used up"],
    'the warning, then the budget used up'
  )
  t.match(mails().find((m) => m.subject.includes('80%'))?.text, `of its monthly budget of ${usd(5 * BOUND)} USD`)
  t.equal(smtp.to(`admin-${address}`).length, 0, 'owners only')
  const [{ n }] = await a.db.sql<{ n: number }[]>`
    select count(*)::int as n from mail_deliveries where account_id = ${accountId} and kind = 'budget'`
  t.equal(n, 2, 'each once this month')
})

// The key budget's two events, delivered, each once this month, for a budget of 5 bounds spent by 5 answers.
async function bothEvents(
  t: Test,
  a: Awaited<ReturnType<typeof mailing>>['a'],
  r: Awaited<ReturnType<typeof receiver>>,
  accountId: string,
  prefix: string
) {
  await eventually(() => r.got.length >= 2, { what: 'both events delivered' })
  const month = new Date().toISOString().slice(0, 7)
  const data = { month, budget: usd(5 * BOUND), spent: usd(5 * COST), keyPrefix: prefix }
  t.match(
    r.got.map((got) => JSON.parse(got.body)),
    [
      { type: 'budget.warning', data },
      { type: 'budget.exhausted', data },
    ]
  )
  const [{ n }] = await a.db.sql<{ n: number }[]>`
    select count(*)::int as n from events where account_id = ${accountId} and type like 'budget.%'`
  t.equal(n, 2, 'each once this month')
}

t.test("a key's budget raises budget.warning and budget.exhausted once each, with its prefix, and mails", async (t) => {
  const { smtp, a, key, address, accountId } = await mailing(t)
  const prefix = prefixOf(key)
  const r = await receiver(t)
  await addEndpoint(a.db.sql, { accountId, url: r.url, events: ['budget.warning', 'budget.exhausted'] }, true)
  // As the account's: the 5th answer crosses 80% of the key's budget, the 6th call is refused by it.
  await keyBudget(key, usd(5 * BOUND))
  const statuses: number[] = []
  for (let i = 0; i < 7; i++) {
    statuses.push((await post(a.url, key)).status)
    await eventually(async () => (await keySpent(a, key)) === Math.min(i + 1, 5) * COST || undefined, {
      what: 'the cost settled',
    })
  }
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429])
  await bothEvents(t, a, r, accountId, prefix)
  await eventually(() => smtp.to(address).length >= 2, { what: 'both mails' })
  t.same(
    smtp.to(address).map((m) => m.subject),
    [`The key ${prefix} has spent 80% of its monthly budget`, `The monthly budget of the key ${prefix} is used up`],
    'the warning, then the budget used up, naming the key'
  )
  t.match(smtp.to(address)[0].text, `The key ${prefix} has spent ${usd(5 * COST)} USD of its monthly budget`)
})

t.test("a rotated key's line raises each event once, with the newest prefix", async (t) => {
  const { a, key, accountId } = await mailing(t)
  const r = await receiver(t)
  await addEndpoint(a.db.sql, { accountId, url: r.url, events: ['budget.warning', 'budget.exhausted'] }, true)
  await keyBudget(key, usd(5 * BOUND))
  const lineSpent = async (keys: string[]) => {
    let n = 0
    for (const k of keys) n += await keySpent(a, k)
    return n
  }
  const call = async (k: string, keys: string[], settled: number) => {
    const { status } = await post(a.url, k)
    await eventually(async () => (await lineSpent(keys)) === settled || undefined, { what: 'the cost settled' })
    return status
  }
  const statuses = [await call(key, [key], COST), await call(key, [key], 2 * COST), await call(key, [key], 3 * COST)]
  const rotated = await cli(['keys', 'rotate', prefixOf(key), '--grace', '1h'])
  t.equal(rotated.code, 0, rotated.err.join('\n'))
  const both = [key, rotated.key]
  // The line's 4th and 5th answers, one through each key, cross 80% of the line's budget; the 6th call is refused.
  statuses.push(await call(rotated.key, both, 4 * COST), await call(key, both, 5 * COST))
  statuses.push(await call(rotated.key, both, 5 * COST), await call(key, both, 5 * COST))
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429])
  await bothEvents(t, a, r, accountId, prefixOf(rotated.key))
})
