import t from 'tap'
import { inviteMember } from '../../src/accounts/team.js'
import { type Browser, signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { leadPoster } from '../support/lead-places.js'
import { startTestServer } from '../support/server.js'

// The lead page's erasure (issue 47): "Erase" and "Erase every lead from this address", each asking first on a page
// of its own, for owners and admins only; both erase through leads/erase.ts (its thoroughness is
// test/leads/erasure.test.ts's) and land on the leads list with a notice.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const { sql } = server.db
const env = { STUDIO_PUBLIC_URL: server.url }
const OWNER = 'eraser@example.com'
const owner = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', OWNER]))
const key = await server.key({ email: OWNER })
const [{ accountId }] = await sql<{ accountId: string }[]>`
  select account_id as "accountId" from api_keys where prefix = ${key.split('_')[1]}`
await inviteMember(sql, accountId, 'member@example.com', 'member')
const member = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'member@example.com']))

const post = (email: string) => leadPoster(server, key)({ name: 'Wil Quarren', email, message: 'Call me' })
const exists = async (id: string) => (await server.fetch(`/api/v1/leads/${id}`, { key })).status === 200
const ERASE = '<button class="danger">Erase</button>'
const submit = (b: Browser, id: string, path: string, form: Record<string, string> = {}) =>
  b.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}/${path}`, form)

t.test('Erase: a confirmation page first, then the lead is gone and the list says so', async (t) => {
  const id = await post('wil@example.org')
  const other = await post('wil@example.org')
  const asked = await submit(owner, id, 'erase')
  t.equal(asked.status, 200, 'the first press only asks')
  t.match(asked.text, '<h1>Erase the lead from Wil Quarren?</h1>')
  t.match(asked.text, 'This cannot be undone.')
  t.match(asked.text, `<a class="button secondary" href="/dashboard/leads/${id}">Cancel</a>`)
  t.ok(await exists(id), 'nothing erased yet')
  const done = await submit(owner, id, 'erase', { confirm: 'yes' })
  t.equal(done.status, 303)
  t.equal(done.headers.get('location'), '/dashboard/leads?done=lead-erased')
  t.match((await owner.get('/dashboard/leads?done=lead-erased')).text, 'The lead was erased')
  t.notOk(await exists(id), 'the lead is gone')
  t.ok(await exists(other), "the address's other lead stays")
  t.equal((await owner.get(`/dashboard/leads/${id}`)).status, 404)
  const [audit] = await sql`select actor_kind, actor, target, after from audit_log where action = 'lead.erased'`
  t.match(audit, { actor_kind: 'user', actor: OWNER, target: id, after: { ids: [id], count: 1 } })
})

t.test('Erase every lead from this address: every case of it, and no other lead', async (t) => {
  const [a, b, kept] = [await post('Cy@Example.org'), await post('cy@example.ORG'), await post('dee@example.org')]
  const asked = await submit(owner, a, 'erase-person')
  t.equal(asked.status, 200)
  t.match(asked.text, '<h1>Erase every lead from Cy@Example.org?</h1>')
  t.match(asked.text, 'all 2 of its leads')
  t.ok((await exists(a)) && (await exists(b)), 'nothing erased yet')
  const done = await submit(owner, a, 'erase-person', { confirm: 'yes' })
  t.equal(done.headers.get('location'), '/dashboard/leads?done=leads-erased')
  t.match((await owner.get('/dashboard/leads?done=leads-erased')).text, 'Every lead from that address was erased')
  t.notOk(await exists(a))
  t.notOk(await exists(b))
  t.ok(await exists(kept))
})

t.test('members: no erase buttons, and the erase forms are refused', async (t) => {
  const id = await post('eve@example.org')
  t.match((await owner.get(`/dashboard/leads/${id}`)).text, ERASE, 'an owner has them')
  const page = await member.get(`/dashboard/leads/${id}`)
  t.equal(page.status, 200)
  t.notMatch(page.text, ERASE, 'a member has none')
  t.notMatch(page.text, 'Erase every lead')
  for (const path of ['erase', 'erase-person']) {
    const r = await submit(member, id, path, { confirm: 'yes' })
    t.equal(r.status, 403, path)
  }
  t.ok(await exists(id), 'still there')
})

t.test('an unknown lead, or not an id: 404', async (t) => {
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id'])
    for (const path of ['erase', 'erase-person']) {
      const csrf = /name="csrf" value="([^"]+)"/.exec((await owner.get('/dashboard/leads')).text)?.[1] ?? ''
      const r = await owner.post(`/dashboard/leads/${id}/${path}`, { csrf, confirm: 'yes' })
      t.equal(r.status, 404, `${id} ${path}`)
    }
})
