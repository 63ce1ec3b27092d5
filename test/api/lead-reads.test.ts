import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { startTestServer } from '../support/server.js'

// GET /api/v1/leads and /leads/{id}: an account's leads read with a leads:read key, newest first, paged by an opaque
// keyset cursor that stays true while leads arrive, filtered by time, status, assignee and spam.
const s = await startTestServer(t)
const { sql } = s.db
const email = 'reader@example.com'
const key = await s.key({ email })
const prefixOf = (k: string) => k.split('_')[1]
const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
  select account_id from api_keys where prefix = ${prefixOf(key)}`
const lead = (i: number) => ({ name: `Lead ${i}`, email: `lead${i}@example.com`, service: 'web', message: `hi ${i}` })
const get = async (path: string, k = key) => {
  const r = await s.fetch(path, { key: k })
  return { status: r.status, body: (await r.json()) as any }
}
const post = async (body: object) => {
  const r = await s.fetch('/api/v1/leads', { method: 'POST', key, json: body })
  t.equal(r.status, 201)
  return ((await r.json()) as { id: string }).id
}

// 1,000 leads, three to each created_at, so that the cursor's id breaks ties.
const old = await sql<{ id: string }[]>`
  insert into leads (account_id, key_prefix, name, email, service, message, created_at)
  select ${accountId}, ${prefixOf(key)}, 'Old ' || i, 'old' || i || '@example.com', 'web', 'old',
         now() - interval '1 day' - (i / 3) * interval '1 second'
  from generate_series(1, 1000) i returning id`

t.test('paging through 1,000 leads while 100 more arrive returns each exactly once', async (t) => {
  const seen: string[] = []
  let cursor: string | null = null
  let arrived = 0
  let pages = 0
  do {
    const page = await get(`/api/v1/leads?limit=37${cursor ? `&cursor=${cursor}` : ''}`)
    t.equal(page.status, 200)
    seen.push(...page.body.leads.map((l: { id: string }) => l.id))
    cursor = page.body.next_cursor
    for (let i = 0; i < 4 && arrived < 100; i++) await post(lead(arrived++))
    pages++
  } while (cursor)
  t.equal(arrived, 100, 'the 100 arrived while paging')
  t.equal(new Set(seen).size, seen.length, 'no lead twice')
  const ids = new Set(seen)
  t.ok(
    old.every((o) => ids.has(o.id)),
    'every one of the 1,000 once'
  )
  t.ok(pages >= 28, `${pages} pages`)
})

t.test('newest first, the default page of 50, and one lead whole', async (t) => {
  const id = await post({ ...lead(1000), company: 'Acme', utm: { source: 'news' } })
  const page = await get('/api/v1/leads')
  t.equal(page.body.leads.length, 50)
  t.equal(page.body.leads[0].id, id, 'the newest first')
  const times = page.body.leads.map((l: { createdAt: string }) => Date.parse(l.createdAt))
  t.same(
    times,
    [...times].sort((a, b) => b - a),
    'ordered newest first'
  )
  const one = await get(`/api/v1/leads/${id}`)
  t.equal(one.status, 200)
  t.match(one.body, {
    id,
    name: 'Lead 1000',
    email: 'lead1000@example.com',
    service: 'web',
    message: 'hi 1000',
    company: 'Acme',
    phone: null,
    utm: { source: 'news', medium: null, campaign: null },
    status: 'new',
    assignee: null,
    keyPrefix: prefixOf(key),
    spam: false,
  })
  t.equal(one.body.updatedAt, one.body.createdAt, 'never changed: updatedAt is createdAt')
  t.notOk('fields' in one.body, 'sent without extra fields: none read')
})

t.test('a lead sent with extra fields reads them, in the page and alone', async (t) => {
  const fields = { plan: 'Team', seats: '12' }
  const id = await post({ ...lead(1001), fields })
  t.same((await get(`/api/v1/leads/${id}`)).body.fields, fields)
  const page = await get('/api/v1/leads?limit=1')
  t.equal(page.body.leads[0].id, id)
  t.same(page.body.leads[0].fields, fields)
})

t.test('the filters: since, until, status, assignee, spam', async (t) => {
  const other = await s.key({ email: 'owner@example.com' })
  const [{ account_id: otherAccount }] = await sql<{ account_id: string }[]>`
    select account_id from api_keys where prefix = ${prefixOf(other)}`
  const [{ id: userId }] = await sql<{ id: string }[]>`select id from users where email = 'owner@example.com'`
  const rows = await sql<{ id: string }[]>`
    insert into leads (account_id, key_prefix, name, email, service, message, created_at, status, assignee_id, spam)
    values (${otherAccount}, 'p', 'A', 'a@example.com', 'web', 'm', '2026-01-01T10:00:00Z', 'won', ${userId}, false),
           (${otherAccount}, 'p', 'B', 'b@example.com', 'web', 'm', '2026-01-02T10:00:00Z', 'new', null, false),
           (${otherAccount}, 'p', 'C', 'c@example.com', 'web', 'm', '2026-01-03T10:00:00Z', 'new', null, true)
    returning id`
  const ids = async (query: string) =>
    (await get(`/api/v1/leads${query}`, other)).body.leads.map((l: { name: string }) => l.name)
  t.same(await ids(''), ['B', 'A'], 'spam left out by default, and only the key’s account')
  t.same(await ids('?spam=true'), ['C'], 'spam=true: the spam')
  t.same(await ids('?since=2026-01-02T00:00:00Z'), ['B'], 'since')
  t.same(await ids('?until=2026-01-02T00:00:00Z'), ['A'], 'until')
  t.same(await ids('?status=won'), ['A'], 'status')
  t.same(await ids('?assignee=OWNER@example.com'), ['A'], 'assignee, by email in any case')
  t.same(await ids('?assignee=nobody@example.com'), [], 'an assignee nobody is')
  t.equal((await get(`/api/v1/leads/${rows[0].id}`)).status, 404, "another account's lead is not found")
})

t.test('bad queries are answered 422 with the parameter named', async (t) => {
  for (const [query, path] of [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=1.5', 'limit'],
    ['cursor=nonsense', 'cursor'],
    ['since=yesterday', 'since'],
    ['status=open', 'status'],
    ['assignee=not-an-email', 'assignee'],
    ['spam=yes', 'spam'],
    ['limit=5&limit=6', 'limit'],
    ['colour=red', 'colour'],
  ]) {
    const r = await get(`/api/v1/leads?${query}`)
    t.equal(r.status, 422, query)
    t.equal(r.body.error.code, 'invalid_request', query)
    t.equal(r.body.error.details.issues[0].path, path, query)
  }
  t.equal((await get('/api/v1/leads?limit=100')).body.leads.length, 100, '100 is allowed')
  t.equal((await get('/api/v1/leads?limit=1')).body.leads.length, 1, 'and 1')
  t.equal((await get('/api/v1/leads/not-a-uuid')).status, 404, 'an id that is no uuid is not found')
})

t.test('scopes: leads:read is needed, old keys have not gained it, web keys cannot hold it', async (t) => {
  const writer = await s.key({ email, scopes: ['leads:write', 'me:read', 'completions:write'] })
  for (const path of ['/api/v1/leads', `/api/v1/leads/${old[0].id}`]) {
    const r = await get(path, writer)
    t.equal(r.status, 403, path)
    t.same(r.body.error.details, { required_scope: 'leads:read' })
  }
  // A key made before leads:read existed: every scope there was then, and none of those made since.
  const before = await s.key({ email })
  await sql`update api_keys set scopes = array['me:read', 'leads:write', 'completions:write'] where prefix = ${prefixOf(before)}`
  const [migrated] = await sql<{ scopes: string[] }[]>`select scopes from api_keys where prefix = ${prefixOf(before)}`
  t.same(migrated.scopes, ['me:read', 'leads:write', 'completions:write'], 'no migration widened it')
  t.equal((await get('/api/v1/leads', before)).status, 403, 'an old key gets 403')
  const reader = await s.key({ email, scopes: ['leads:read'] })
  t.equal((await get('/api/v1/leads?limit=1', reader)).status, 200, 'a leads:read key reads')
  await t.rejects(
    createKey(sql, { email, scopes: ['leads:write', 'leads:read'], origins: ['https://shop.example'] }),
    { code: 'bad_request' },
    'a key with web origins cannot hold leads:read'
  )
  await t.rejects(
    createKey(sql, { email, origins: ['https://shop.example'] }),
    { code: 'bad_request' },
    'nor all scopes'
  )
})
