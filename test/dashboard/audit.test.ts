import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { Browser, signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

// The Audit log page: owners and admins only, newest first, filtered by action and actor, exported as CSV.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const env = { STUDIO_PUBLIC_URL: server.url }
const link = (email: string, ...more: string[]) => signinLink(dbEnv, env, ['--email', email, ...more])
const quiet = { out: () => {}, err: () => {} }

const owner = await signInWithLink(server.url, await link('owner@example.com'))
await run(['plan', 'set', '--email', 'owner@example.com', 'PRO'], { ...dbEnv, ...env }, quiet)
await owner.submit('/dashboard/keys', '/dashboard/keys', { name: 'site <b>', expires: '' })
await owner.submit('/dashboard/team', '/dashboard/team', { email: 'member@example.com', role: 'member' })

const actions = (page: string) => [...page.matchAll(/<td><code>([a-z_.]+)<\/code><\/td>/g)].map((m) => m[1])

t.test('owners see every change of their account, newest first, with actor and address', async (t) => {
  const page = await owner.get('/dashboard/audit')
  t.equal(page.status, 200)
  t.match(page.text, '<a href="/dashboard/audit" aria-current="page">Audit log</a>')
  t.same(actions(page.text), [
    'signin_link.created',
    'member.invited',
    'key.created',
    'plan.changed',
    'signin.succeeded',
    'password.changed',
    'signin_link.created',
    'user.created',
    'account.created',
  ])
  t.match(page.text, /cli \([^)]+\)/, 'the CLI, with its OS user')
  t.match(page.text, /<td>owner@example\.com<br><span class="muted">from [^<]+<\/span><\/td>\s*<td><code>key\.created/)
  t.match(
    page.text,
    '<div><dt>plan</dt><dd>FREE <span aria-label="changed to">→</span> PRO</dd></div>',
    'field: old → new'
  )
  t.match(page.text, '<div><dt>role</dt><dd>member</dd></div>', 'a value made: only the new one')
  t.notMatch(page.text, '<b>', 'everything escaped')
})

t.test('filters by action and by actor; a filter value outside the lists is ignored', async (t) => {
  const byAction = await owner.get('/dashboard/audit?action=signin_link.created')
  t.same(actions(byAction.text), ['signin_link.created', 'signin_link.created'])
  t.match(byAction.text, '<option value="signin_link.created" selected>')
  const byUser = await owner.get(`/dashboard/audit?actor=${encodeURIComponent('user:owner@example.com')}`)
  t.same(actions(byUser.text), [
    'signin_link.created',
    'member.invited',
    'key.created',
    'signin.succeeded',
    'password.changed',
  ])
  const both = await owner.get(
    `/dashboard/audit?action=plan.changed&actor=${encodeURIComponent('user:owner@example.com')}`
  )
  t.same(actions(both.text), [])
  t.match(both.text, 'No entries')
  const junk = await owner.get('/dashboard/audit?action=%3Cscript%3E&actor=nope&before=abc')
  t.equal(junk.status, 200)
  t.equal(actions(junk.text).length, 0, 'a before that is not an id: nothing older')
  t.notMatch(junk.text, '<script>')
})

t.test('CSV export: the filtered entries, newest first', async (t) => {
  const csv = await owner.get('/dashboard/audit.csv?action=signin_link.created')
  t.equal(csv.status, 200)
  t.match(csv.headers.get('content-type'), /^text\/csv/)
  t.match(csv.headers.get('content-disposition'), 'attachment; filename="audit-log.csv"')
  const lines = csv.text.split('\r\n').filter(Boolean)
  t.equal(lines[0], 'time,actor,action,target,address,before,after')
  t.equal(lines.length, 3)
  t.match(lines[1], /^\d{4}-\d\d-\d\dT[\d:.]+Z,owner@example\.com,signin_link\.created,member@example\.com,/)
  const all = (await owner.get('/dashboard/audit.csv')).text.split('\r\n').filter(Boolean)
  t.equal(all.length, 10)
  t.match(all[4], '"{""plan"":""FREE""}","{""plan"":""PRO""}"')
})

t.test('members get the forbidden page and no link; signed out: the sign-in page', async (t) => {
  await run(['keys', 'create', '--email', 'member@example.com'], { ...dbEnv, ...env }, quiet)
  const member = await signInWithLink(server.url, await link('member@example.com'))
  const keys = await member.get('/dashboard/keys')
  t.notMatch(keys.text, '/dashboard/audit')
  for (const path of ['/dashboard/audit', '/dashboard/audit.csv']) {
    const r = await member.get(path)
    t.equal(r.status, 403, path)
    t.match(r.text, 'Only owners and admins')
    const out = await new Browser(server.url).get(path)
    t.equal(out.status, 303)
    t.equal(out.headers.get('location'), '/dashboard/signin')
  }
})
