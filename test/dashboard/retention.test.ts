import t from 'tap'
import { inviteMember } from '../../src/accounts/team.js'
import { csrfOf, signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

// The Account page's lead retention (issue 47): a plain form only owners may send; empty keeps leads.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const { sql } = server.db
const env = { STUDIO_PUBLIC_URL: server.url }
const owner = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'keeper@example.com']))
const [{ accountId }] = await sql<{ accountId: string }[]>`
  select account_id as "accountId" from users where email = 'keeper@example.com'`
await inviteMember(sql, accountId, 'helper@example.com', 'admin')
const admin = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'helper@example.com']))
const days = async () =>
  (await sql<{ d: number | null }[]>`select lead_retention_days as d from accounts where id = ${accountId}`)[0].d

t.test('an owner sets the retention, then keeps leads again', async (t) => {
  const before = await owner.get('/dashboard/account')
  t.match(before.text, 'Leads are kept until someone erases them.')
  t.match(before.text, /<form method="post" action="\/dashboard\/account\/retention">/)
  const set = await owner.submit('/dashboard/account', '/dashboard/account/retention', { days: '365' })
  t.equal(set.status, 303)
  t.equal(set.headers.get('location'), '/dashboard/account?done=retention')
  t.equal(await days(), 365)
  const after = await owner.get('/dashboard/account?done=retention')
  t.match(after.text, /lead retention was saved\./)
  t.match(after.text, /older than <strong>365<\/strong> days/)
  t.match(after.text, /name="days"[^>]*\n?value="365"/)
  const [audit] = await sql`select actor_kind, actor, after from audit_log where action = 'retention.changed'`
  t.match(audit, { actor_kind: 'user', actor: 'keeper@example.com', after: { lead_retention_days: 365 } })

  t.equal((await owner.submit('/dashboard/account', '/dashboard/account/retention', { days: '' })).status, 303)
  t.equal(await days(), null, 'empty: kept')
})

t.test('bad days: a 422 page saying why, nothing changed', async (t) => {
  for (const bad of ['0', '-1', '2.5', 'soon', '36501']) {
    const r = await owner.submit('/dashboard/account', '/dashboard/account/retention', { days: bad })
    t.equal(r.status, 422, bad)
    t.match(r.text, 'a whole number of days from 1 to 36500')
  }
  t.equal(await days(), null)
})

t.test('an admin sees the retention but cannot change it', async (t) => {
  const page = await admin.get('/dashboard/account')
  t.match(page.text, 'Only an owner can change it.')
  t.notMatch(page.text, 'action="/dashboard/account/retention"')
  const r = await admin.post('/dashboard/account/retention', { csrf: csrfOf(page.text), days: '30' })
  t.equal(r.status, 403)
  t.equal(await days(), null)
})
