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
