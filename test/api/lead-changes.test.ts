import t from 'tap'
import { addEndpoint } from '../../src/events/endpoints.js'
import { eventually } from '../support/eventually.js'
import { leadPoster } from '../support/lead-places.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// PATCH /api/v1/leads/{id}: a leads:manage key changes a lead's status and assignee; each change is a lead.updated
// event at the account's webhook receiver and an audit entry naming the key.
const s = await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' })
const { sql } = s.db
const key = await s.key({ email: 'manager@example.com' })
const prefix = key.split('_')[1]
const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
  select account_id from api_keys where prefix = ${prefix}`
await sql`insert into users (account_id, email, role) values (${accountId}, 'Bo@example.com', 'member')`
const hook = await receiver(t)
await addEndpoint(sql, { accountId, url: hook.url, events: ['lead.updated'] }, true)

const newLead = () => leadPoster(s, key)({ name: 'Ada', email: 'ada@example.com', message: 'Hello' })
const patch = async (id: string, json: unknown, k = key) => {
  const r = await s.fetch(`/api/v1/leads/${id}`, { method: 'PATCH', key: k, json })
  return { status: r.status, body: (await r.json()) as any }
}
const webhooks = () => hook.got.map((g) => JSON.parse(g.body) as { type: string; data: any })

t.test('a status change and an assignment: the lead, its event at the receiver, its audit entry', async (t) => {
  const id = await newLead()
  const changed = await patch(id, { status: 'contacted', assignee: 'bo@EXAMPLE.com' })
  t.equal(changed.status, 200)
  t.match(changed.body, { id, status: 'contacted', assignee: 'Bo@example.com' })
  t.ok(changed.body.updatedAt > changed.body.createdAt, 'updatedAt moved')
  const read = await s.fetch(`/api/v1/leads/${id}`, { key })
  t.match(await read.json(), { status: 'contacted', assignee: 'Bo@example.com' }, 'the read API agrees')
  await eventually(() => webhooks().some((w) => w.data.id === id), { what: 'lead.updated at the receiver' })
  const [event] = webhooks().filter((w) => w.data.id === id)
  t.equal(event.type, 'lead.updated')
  t.same(event.data, {
    id,
    changes: {
      status: { before: 'new', after: 'contacted' },
      assignee: { before: null, after: 'Bo@example.com' },
    },
    who: null,
    keyPrefix: prefix,
  })
  const audit = await sql`select actor_kind, actor, before, after from audit_log where target = ${id}`
  t.same(audit, [
    {
      actor_kind: 'key',
      actor: prefix,
      before: { status: 'new', assignee: null },
      after: { status: 'contacted', assignee: 'Bo@example.com' },
    },
  ])

  const back = await patch(id, { status: 'new', assignee: null })
  t.match(back.body, { status: 'new', assignee: null }, 'any status may follow any; null unassigns')
  await eventually(() => webhooks().filter((w) => w.data.id === id).length === 2, { what: 'the second event' })
  const same = await patch(id, { status: 'new' })
  t.equal(same.status, 200, 'a change that changes nothing is answered')
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from audit_log where target = ${id}`
  t.equal(n, 2, 'and writes no entry')
  t.equal(
    (await sql`select 1 from events where type = 'lead.updated' and body::jsonb->'data'->>'id' = ${id}`).length,
    2
  )
})

t.test('errors: the caller’s invalid request, an unknown lead', async (t) => {
  const id = await newLead()
  for (const [json, path] of [
    [{}, ''],
    [{ status: 'open' }, 'status'],
    [{ assignee: 'not an email' }, 'assignee'],
    [{ assignee: 'stranger@example.com' }, 'assignee'],
    [{ status: 'won', colour: 'red' }, 'colour'],
  ] as const) {
    const r = await patch(id, json)
    t.equal(r.status, 422, JSON.stringify(json))
    t.equal(r.body.error.code, 'invalid_request')
    if (path) t.match(r.body.error.message, path)
  }
  const other = await s.key({ email: 'stranger@example.com' })
  t.equal((await patch(id, { status: 'won' }, other)).status, 404, "another account's lead is not found")
  t.equal((await patch('00000000-0000-4000-8000-000000000000', { status: 'won' })).status, 404)
  t.match(await s.fetch(`/api/v1/leads/${id}`, { key }).then((r) => r.json()), { status: 'new', assignee: null })
})

t.test('scopes: leads:manage is needed, and an old key has not gained it', async (t) => {
  const id = await newLead()
  const reader = await s.key({ email: 'manager@example.com', scopes: ['leads:read', 'leads:write'] })
  const r = await patch(id, { status: 'won' }, reader)
  t.equal(r.status, 403)
  t.same(r.body.error.details, { required_scope: 'leads:manage' })
  const old = await s.key({ email: 'manager@example.com' })
  await sql`update api_keys set scopes = array['me:read', 'leads:write', 'completions:write']
            where prefix = ${old.split('_')[1]}`
  t.equal((await patch(id, { status: 'won' }, old)).status, 403, 'a key made before the scope existed')
  const manager = await s.key({ email: 'manager@example.com', scopes: ['leads:manage'] })
  t.equal((await patch(id, { status: 'won' }, manager)).status, 200, 'a leads:manage key alone')
})

t.test('notes: appended with their author and time, read with the lead, never changed', async (t) => {
  const id = await newLead()
  const add = async (json: unknown, k = key) => {
    const r = await s.fetch(`/api/v1/leads/${id}/notes`, { method: 'POST', key: k, json })
    return { status: r.status, body: (await r.json()) as any }
  }
  const first = await add({ text: 'Called, no answer' })
  t.equal(first.status, 201)
  t.match(first.body, { text: 'Called, no answer', author: prefix, authorKind: 'key', createdAt: /^\d{4}-/ })
  await add({ text: 'x'.repeat(10_000) })
  const lead = (await (await s.fetch(`/api/v1/leads/${id}`, { key })).json()) as any
  t.same(
    lead.notes.map((n: { text: string }) => n.text.length),
    [17, 10_000],
    'oldest first, in the lead'
  )
  const page = (await (await s.fetch('/api/v1/leads?limit=100', { key })).json()) as any
  t.equal(page.leads.find((l: { id: string }) => l.id === id).notes.length, 2, 'and in the list')
  for (const json of [{}, { text: '' }, { text: '   ' }, { text: 'x'.repeat(10_001) }, { text: 'a', author: 'me' }])
    t.equal((await add(json)).status, 422, JSON.stringify(json).slice(0, 40))
  const reader = await s.key({ email: 'manager@example.com', scopes: ['leads:read'] })
  t.equal((await add({ text: 'hi' }, reader)).status, 403, 'leads:manage is needed')
  const other = await s.key({ email: 'notes-stranger@example.com' })
  t.equal((await add({ text: 'hi' }, other)).status, 404, "another account's lead is not found")
  await t.rejects(sql`update lead_notes set text = 'changed'`, /append-only/, 'the database refuses a change')
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from lead_notes where lead_id = ${id}`
  t.equal(n, 2)
})
