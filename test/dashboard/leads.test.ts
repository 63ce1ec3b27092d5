import t from 'tap'
import { Browser, signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const env = { STUDIO_PUBLIC_URL: server.url }
const owner = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'leads@example.com']))
const key = await server.key({ email: 'leads@example.com', keyName: 'site form' })
const HOSTILE = `"><img src=x onerror=alert(1)><script>alert(1)</script>javascript:alert(1)`

const lead = (i: number, extra: Record<string, unknown> = {}) =>
  server.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    json: { name: `Lead ${i}`, email: `lead${i}@example.com`, service: 'web', message: `hello ${i}`, ...extra },
  })

// Set-up outside any subtest: a failure throws (an assertion here would end the root test).
async function created(res: Promise<Response>) {
  const r = await res
  if (r.status !== 201) throw new Error(`POST /leads answered ${r.status}`)
  return r
}
for (let i = 0; i < 120; i++) await created(lead(i))
await created(
  lead(1000, {
    company: 'Needle Corp',
    utm: { source: 'news', campaign: 'fall' },
    fields: { 'team size': '12', '<i>x</i>': HOSTILE },
  })
)
await created(lead(2000, { name: '=HYPERLINK("http://evil")', message: 'line one\n"quoted", comma' }))
const hostile = await created(
  lead(3000, {
    name: HOSTILE,
    email: 'x@example.com',
    message: HOSTILE,
    company: HOSTILE,
    phone: '<script>alert(1)</script>',
    budget: HOSTILE,
    source: HOSTILE,
    utm: { source: HOSTILE, medium: HOSTILE, campaign: HOSTILE },
  })
)
const hostileId = ((await hostile.json()) as { id: string }).id

const rowsOf = (page: string) => [...page.matchAll(/href="\/dashboard\/leads\/([\w-]{36})"/g)].map((m) => m[1])

t.test('50 a page, newest first, keyset pages until the oldest', async (t) => {
  const seen: string[] = []
  let path: string | null = '/dashboard/leads'
  let pages = 0
  while (path && pages < 10) {
    const page = await owner.get(path)
    t.equal(page.status, 200)
    seen.push(...rowsOf(page.text))
    path = /href="(\/dashboard\/leads\?[^"]*after=[^"]+)"/.exec(page.text)?.[1]?.replaceAll('&amp;', '&') ?? null
    pages++
  }
  t.equal(pages, 3)
  t.equal(seen.length, 123)
  t.equal(new Set(seen).size, 123, 'no lead twice')
  t.equal(seen[0], hostileId, 'newest first')
})

t.test('search over name, email, company and message; a date range', async (t) => {
  const byCompany = await owner.get('/dashboard/leads?q=needle')
  t.equal(rowsOf(byCompany.text).length, 1)
  t.match(byCompany.text, 'Lead 1000')
  t.equal(rowsOf((await owner.get('/dashboard/leads?q=hello%2011')).text).length, 1 + 10, 'hello 11, 110..119')
  t.equal(rowsOf((await owner.get('/dashboard/leads?q=lead7%40')).text).length, 1)
  t.equal(rowsOf((await owner.get('/dashboard/leads?q=%25')).text).length, 0, '% is literal')
  t.match((await owner.get('/dashboard/leads?q=nothing-like-this')).text, 'No lead matches')
  t.equal(rowsOf((await owner.get('/dashboard/leads?to=2000-01-01')).text).length, 0)
  const today = new Date().toISOString().slice(0, 10)
  t.equal(rowsOf((await owner.get(`/dashboard/leads?from=${today}&q=needle`)).text).length, 1)
})

t.test('the detail page: every field, the UTM values, the key', async (t) => {
  const list = await owner.get('/dashboard/leads?q=needle')
  const page = await owner.get(`/dashboard/leads/${rowsOf(list.text)[0]}`)
  t.equal(page.status, 200)
  for (const text of ['Needle Corp', 'lead1000@example.com', 'news', 'fall', key.split('_')[1], 'site form'])
    t.match(page.text, text)
  t.match(page.text, '<dt>team size</dt><dd>12</dd>', 'an extra field under its own name')
  t.match(page.text, '<dt>&lt;i&gt;x&lt;/i&gt;</dt>', 'its name escaped')
  t.notMatch(page.text, '<img src=x', 'its value escaped')
  t.equal((await owner.get('/dashboard/leads/00000000-0000-0000-0000-000000000000')).status, 404)
  t.equal((await owner.get('/dashboard/leads/not-a-uuid')).status, 404)
})

t.test('hostile lead fields render as inert text', async (t) => {
  for (const path of ['/dashboard/leads', `/dashboard/leads/${hostileId}`]) {
    const page = await owner.get(path)
    t.notMatch(page.text, '<img src=x', path)
    t.notMatch(page.text, '<script>alert', path)
    t.notMatch(page.text, 'href="javascript:', path)
    t.match(page.text, '&lt;script&gt;alert(1)&lt;/script&gt;')
  }
})

t.test('CSV export: every filtered lead, quoted, formulas defused', async (t) => {
  const res = await fetch(`${server.url}/dashboard/leads.csv`, { headers: { cookie: owner.cookie } })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/csv/)
  t.match(res.headers.get('content-disposition'), 'attachment')
  const text = await res.text()
  t.match(text, /^id,created_at,name,email,/)
  t.match(text, `,"'=HYPERLINK(""http://evil"")",`)
  t.match(text, `"line one\n""quoted"", comma"`)
  t.equal(text.split('\r\n').filter((l) => /^[\da-f]{8}-/.test(l)).length, 123)
  const filtered = await fetch(`${server.url}/dashboard/leads.csv?q=needle`, { headers: { cookie: owner.cookie } })
  const needle = (await filtered.text()).trim().split('\r\n')
  t.equal(needle.length, 2)
  t.match(needle[0], /,key_prefix,fields$/)
  t.match(needle[1], '""team size"": ""12""', 'the extra fields as one JSON object')
  t.equal((await fetch(`${server.url}/dashboard/leads.csv`, { redirect: 'manual' })).status, 303, 'signed in only')
})

t.test("another account's leads are not visible", async (t) => {
  const other = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'other@example.com']))
  t.match((await other.get('/dashboard/leads')).text, 'No leads yet')
  t.equal((await other.get(`/dashboard/leads/${hostileId}`)).status, 404)
  t.ok(new Browser(server.url))
})

const leadIdOf = async (q: string) => rowsOf((await owner.get(`/dashboard/leads?q=${q}`)).text)[0]
const apiLead = async (id: string) =>
  (await (await server.fetch(`/api/v1/leads/${id}`, { key })).json()) as {
    status: string
    assignee: string | null
    notes: { text: string; author: string }[]
  }

t.test('status and assignee: one plain form, the same change as the API, audited', async (t) => {
  const invited = await owner.submit('/dashboard/team', '/dashboard/team', {
    email: 'colleague@example.com',
    role: 'member',
  })
  t.equal(invited.status, 200)
  const id = await leadIdOf('lead5%40')
  const page = await owner.get(`/dashboard/leads/${id}`)
  t.match(page.text, '<option value="colleague@example.com">colleague@example.com</option>', 'every user to pick')
  t.match(page.text, '<option value="new" selected>new</option>')
  const saved = await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}`, {
    status: 'contacted',
    assignee: 'colleague@example.com',
  })
  t.equal(saved.status, 303)
  t.equal(saved.headers.get('location'), `/dashboard/leads/${id}?done=lead-saved`)
  const after = await owner.get(`/dashboard/leads/${id}?done=lead-saved`)
  t.match(after.text, 'were saved')
  t.match(after.text, '<option value="contacted" selected>contacted</option>')
  t.match(after.text, '<option value="colleague@example.com" selected>')
  t.match(await apiLead(id), { status: 'contacted', assignee: 'colleague@example.com' }, 'the API reads the change')
  const audit = await owner.get('/dashboard/audit')
  t.match(audit.text, 'lead.updated')
  const nobody = await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}`, { status: 'won', assignee: '' })
  t.equal(nobody.status, 303)
  t.match(await apiLead(id), { status: 'won', assignee: null }, 'nobody')
})

t.test('status and assignee: bad input is an error page, nothing changed', async (t) => {
  const id = await leadIdOf('lead6%40')
  const stranger = await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}`, {
    status: 'won',
    assignee: 'stranger@example.com',
  })
  t.equal(stranger.status, 422)
  t.match(stranger.text, 'assignee: is not a user of this account')
  const status = await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}`, { status: 'done' })
  t.equal(status.status, 400)
  t.match(status.text, 'Pick a status from the list')
  t.match(await apiLead(id), { status: 'new', assignee: null })
  const missing = '00000000-0000-0000-0000-000000000000'
  t.equal((await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${missing}`, { status: 'won' })).status, 404)
  t.equal((await owner.submit(`/dashboard/leads/${id}`, '/dashboard/leads/nope', { status: 'won' })).status, 404)
  t.equal((await owner.post(`/dashboard/leads/${id}`, { status: 'won' })).status, 403, 'no CSRF token, no change')
})

t.test('notes: added from the page with their author and time, listed oldest first', async (t) => {
  const id = await leadIdOf('lead7%40')
  t.match((await owner.get(`/dashboard/leads/${id}`)).text, 'No notes yet')
  for (const text of ['Called, <b>no answer</b>', 'Second try\nreached them'])
    t.equal((await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}/notes`, { text })).status, 303)
  const page = (await owner.get(`/dashboard/leads/${id}?done=note-added`)).text
  t.match(page, 'The note was added')
  t.match(page, /leads@example\.com · \d{4}-\d\d-\d\d \d\d:\d\d UTC<\/p><p class="note">Called, &lt;b&gt;no answer/)
  t.ok(page.indexOf('Called') < page.indexOf('Second try'), 'oldest first')
  t.match((await apiLead(id)).notes, [{ author: 'leads@example.com', text: 'Called, <b>no answer</b>' }, {}])
  const blank = await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}/notes`, { text: '  ' })
  t.equal(blank.status, 422)
  t.match(blank.text, 'text: must not be blank')
  const long = await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}/notes`, {
    text: 'x'.repeat(10_001),
  })
  t.equal(long.status, 422)
  t.equal((await apiLead(id)).notes.length, 2, 'nothing added by a refused note')
})

t.test('the list: filters by status and assignee as GET parameters, unread until opened', async (t) => {
  const id = await leadIdOf('lead8%40')
  t.match((await owner.get('/dashboard/leads?q=lead8%40')).text, 'badge unread', 'nobody opened it yet')
  await owner.submit(`/dashboard/leads/${id}`, `/dashboard/leads/${id}`, {
    status: 'qualified',
    assignee: 'leads@example.com',
  })
  t.notMatch((await owner.get('/dashboard/leads?q=lead8%40')).text, 'badge unread', 'opened')
  t.same(rowsOf((await owner.get('/dashboard/leads?status=qualified')).text), [id])
  t.same(rowsOf((await owner.get('/dashboard/leads?assignee=me')).text), [id], 'assigned to me')
  const mine = await owner.get('/dashboard/leads?assignee=me&status=qualified')
  t.match(mine.text, '<option value="me" selected>Me</option>', 'the filter shown as chosen')
  t.equal(rowsOf((await owner.get('/dashboard/leads?assignee=me&status=lost')).text).length, 0)
  t.equal(rowsOf((await owner.get('/dashboard/leads?assignee=nobody')).text).length, 50, 'a page of unassigned')
  t.notOk(rowsOf((await owner.get('/dashboard/leads?assignee=nobody&q=lead8%40')).text).length)
  const all = rowsOf((await owner.get('/dashboard/leads?status=bogus&assignee=%27%3B')).text).length
  t.equal(all, 50, 'unknown filter values are dropped, not an error')
  const csv = await fetch(`${server.url}/dashboard/leads.csv?status=qualified`, { headers: { cookie: owner.cookie } })
  t.equal((await csv.text()).trim().split('\r\n').length, 2, 'the export follows the filters')
})
