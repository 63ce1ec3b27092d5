import { randomUUID } from 'node:crypto'
import t from 'tap'
import { openLeads } from '../../src/leads/create.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import type { LeadOwner, NewLead } from '../../src/leads/insert.js'
import { startTestServer } from '../support/server.js'

// Leads by group commit (leads/create.ts): leads asked for together are stored by one statement, one commit,
// with their events; a row that fails fails alone; Idempotency-Keys stay exact; every 201 is a stored row.
const s = await startTestServer(t)
const { sql } = s.db
const key = await s.key({ email: 'batch@example.com' })
const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
  select account_id from users where email = 'batch@example.com'`
const owner: LeadOwner = { accountId, prefix: key.split('_')[1] }
const lead = (n: number): NewLead => ({
  name: `Lead ${n}`,
  email: `lead${n}@example.com`,
  service: 'audit',
  message: `Hello ${n}`,
  ...(n % 2 ? { company: 'Acme', utm: { source: 'ads' } } : {}),
})
await addEndpoint(sql, { accountId, url: 'https://hooks.example.com/leads', events: ['lead.created'] }, true)

const eventsOf = async (ids: string[]) =>
  sql<{ lead: string; body: string; deliveries: number }[]>`
    select e.body::json->'data'->>'id' as lead, e.body,
           (select count(*)::int from webhook_deliveries d where d.event_id = e.id) as deliveries
    from events e where e.body::json->'data'->>'id' = any(${ids})`

t.test('leads asked for in one turn share one commit, each with its exact event', async (t) => {
  const { create: store } = openLeads(sql)
  const leads = Array.from({ length: 10 }, (_, i) => lead(i))
  const stored = await Promise.all(leads.map((l) => store(owner, l)))
  const ids = stored.map((r) => r.id)
  const [{ commits }] = await sql<{ commits: number }[]>`
    select count(distinct xmin::text)::int as commits from leads where id = any(${ids}::uuid[])`
  t.equal(commits, 1, 'one transaction wrote the ten rows')
  const events = new Map((await eventsOf(ids)).map((e) => [e.lead, e]))
  stored.forEach((r, i) => {
    const createdAt = r.createdAt.toISOString()
    const data = { ...leads[i], id: r.id, createdAt, keyPrefix: owner.prefix }
    t.equal(events.get(r.id)?.body, JSON.stringify({ type: 'lead.created', timestamp: createdAt, data }), `body ${i}`)
    t.equal(events.get(r.id)?.deliveries, 1, `its delivery ${i}`)
  })
})

t.test('a lead kept as spam in a batch is stored, without an event', async (t) => {
  const { create: store } = openLeads(sql)
  const [kept, spam] = await Promise.all([
    store(owner, lead(300)),
    store(owner, { ...lead(301), website: 'https://spam.example' }),
  ])
  const rows = await sql<{ id: string; spam: boolean }[]>`
    select id, spam from leads where id = any(${[kept.id, spam.id]}::uuid[]) order by spam`
  t.same(
    rows.map((r) => [r.id, r.spam]),
    [
      [kept.id, false],
      [spam.id, true],
    ]
  )
  t.same(
    (await eventsOf([kept.id, spam.id])).map((e) => e.lead),
    [kept.id],
    'an event for the other lead alone'
  )
})

t.test('a row that fails the statement fails alone; the others of its batch are stored', async (t) => {
  const { create: store } = openLeads(sql)
  const nobody: LeadOwner = { accountId: randomUUID(), prefix: 'nobody' }
  const outcomes = await Promise.allSettled(
    Array.from({ length: 8 }, (_, i) => store(i === 3 ? nobody : owner, lead(100 + i)))
  )
  const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [{ i, code: o.reason.code }] : []))
  t.same(failed, [{ i: 3, code: '23503' }], 'the lead of an account that does not exist, alone (a foreign key)')
  const ids = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.id] : []))
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from leads where id = any(${ids}::uuid[])`
  t.equal(n, 7, 'the seven others stored')
  t.equal((await eventsOf(ids)).length, 7, 'with their events')
  const [{ none }] = await sql<{ none: number }[]>`
    select count(*)::int as none from leads where key_prefix = 'nobody'`
  t.equal(none, 0)
})

t.test('one Idempotency-Key several times in one batch: one lead, one answer, another body refused', async (t) => {
  const { create: store } = openLeads(sql)
  const same = lead(200)
  const answers = await Promise.allSettled([
    store(owner, same, 'batch-key'),
    store(owner, lead(201)),
    store(owner, same, 'batch-key'),
    store(owner, { ...same, message: 'another body' }, 'batch-key'),
    store(owner, same, 'batch-key'),
  ])
  const [first, other, second, refused, third] = answers
  t.equal(refused.status, 'rejected')
  t.match(refused.status === 'rejected' && refused.reason, { code: 'idempotency_key_reused' })
  t.equal(other.status, 'fulfilled')
  const got = [first, second, third].map((a) => (a.status === 'fulfilled' ? a.value : null))
  t.equal(new Set(got.map((a) => a?.id)).size, 1, 'one id')
  t.equal(new Set(got.map((a) => a?.createdAt.toISOString())).size, 1, 'one createdAt')
  t.same(
    got.map((a) => a?.replayed),
    [false, true, true],
    'the first stored it, the others replay'
  )
  const rows = await sql`select id from leads where idempotency_key = 'batch-key'`
  t.equal(rows.length, 1)
  t.equal((await eventsOf([rows[0].id])).length, 1, 'one event')
})

t.test('300 concurrent POST /leads: rows = 201s, Idempotency-Keys exact', async (t) => {
  const before = (await sql<{ n: number }[]>`select count(*)::int as n from leads`)[0].n
  const post = (i: number) => {
    // Every third request carries one of 20 keys (five requests each), with that key's one body.
    const idem = i % 3 === 0 ? `http-${i % 20}` : undefined
    return s
      .fetch('/api/v1/leads', {
        method: 'POST',
        key,
        json: idem ? lead(1000 + (i % 20)) : lead(i),
        headers: idem ? { 'idempotency-key': idem } : {},
      })
      .then(async (r) => ({
        idem,
        status: r.status,
        replayed: r.headers.get('idempotent-replayed'),
        ...((await r.json()) as { id: string; createdAt: string }),
      }))
  }
  const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => post(i)))
  t.same(new Set(answers.map((a) => a.status)), new Set([201]), 'every one a 201')
  const created = answers.filter((a) => a.replayed === null)
  const [{ n, commits }] = await sql<{ n: number; commits: number }[]>`
    select count(*)::int as n, count(distinct xmin::text)::int as commits from leads
    where id = any(${created.map((a) => a.id)}::uuid[])`
  t.equal((await sql<{ n: number }[]>`select count(*)::int as n from leads`)[0].n - before, created.length)
  t.equal(n, created.length, 'every lead answered as created is stored')
  // How many share a commit depends on how fast the requests come (the test's client shares the machine): said, not
  // asserted; the first test shows leads that come together sharing one.
  t.comment(`${created.length} leads in ${commits} commits`)
  const keyed = answers.filter((a) => a.idem)
  for (const k of new Set(keyed.map((a) => a.idem))) {
    const mine = keyed.filter((a) => a.idem === k)
    t.equal(new Set(mine.map((a) => `${a.id} ${a.createdAt}`)).size, 1, `${k}: one answer`)
    t.equal(mine.filter((a) => a.replayed === null).length, 1, `${k}: one creation`)
  }
  t.equal(created.length, 200 + 20, 'the 200 without a key and one per key')
})
