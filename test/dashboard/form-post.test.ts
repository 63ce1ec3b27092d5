import t from 'tap'
import { setKeyForm } from '../../src/accounts/key-form.js'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { issuedKeys, startTestServer } from '../support/server.js'

// POST /forms/{prefix} over HTTP as a browser sends a plain form: its pages and redirects, its refusals, and its
// JSON answers when asked. The Chromium test (form-browser.test.ts) submits a real page.
const SITE = 'https://shop.example'
const s = await startTestServer(t, { STUDIO_LEAD_KEY_ADDRESS_LIMIT: '1000' })
const { sql } = s.db
async function formKey(thankYou: string | null = null, rateLimit?: number) {
  const email = `form${Math.random().toString(36).slice(2)}@example.com`
  const limits = rateLimit ? { rateLimit } : undefined
  const made = await createKey(sql, { email, scopes: ['leads:write'], origins: [SITE], ...(limits && { limits }) })
  issuedKeys.push(made.key)
  const r = await setKeyForm(sql, { prefix: made.prefix, change: { open: true, thankYou } })
  if (!r.ok) throw new Error('not opened')
  return made.prefix
}
const prefix = await formKey()
const leadsOf = (p: string) =>
  sql<{ name: string; email: string; fields: unknown; utm_source: string | null; spam: boolean }[]>`
    select name, email, fields, utm_source, utm_medium, spam from leads where key_prefix = ${p} order by created_at`

const FORM = {
  name: 'Ada',
  email: 'ada@example.com',
  service: 'Hosting',
  message: 'Call me',
  phone: '',
  'team size': '12',
  utm_source: 'news',
  utm_medium: 'mail',
  _next: '',
  _idempotency: '',
}
const post = (p: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one)
  return fetch(`${s.url}/forms/${p}`, {
    method: 'POST',
    body,
    redirect: 'manual',
    headers: { origin: SITE, referer: `${SITE}/contact`, ...headers },
  })
}

t.test('happy', async (t) => {
  t.test('a plain form: the thank-you page, a link back, the lead with its fields and UTM', async (t) => {
    const res = await post(prefix, { ...FORM, topics: ['a', 'b'] })
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), 'text/html')
    t.match(res.headers.get('content-security-policy'), "default-src 'none'")
    const page = await res.text()
    t.match(page, 'Thank you')
    t.match(page, `<a href="${SITE}/contact">`)
    const [lead] = await leadsOf(prefix)
    t.match(lead, {
      name: 'Ada',
      email: 'ada@example.com',
      fields: { 'team size': '12', topics: 'a, b' },
      utm_source: 'news',
      utm_medium: 'mail',
      spam: false,
    })
  })

  t.test('_next on the key’s origin: 303 there; elsewhere: ignored', async (t) => {
    const p = await formKey()
    const next = await post(p, { ...FORM, _next: `${SITE}/thanks?x=1` })
    t.equal(next.status, 303)
    t.equal(next.headers.get('location'), `${SITE}/thanks?x=1`)
    for (const foreign of ['https://evil.example/x', 'javascript:alert(1)', '//evil.example', '/relative']) {
      const res = await post(p, { ...FORM, _next: foreign })
      t.equal(res.status, 200, foreign)
      t.equal(res.headers.get('location'), null)
    }
    t.equal((await leadsOf(p)).length, 5)
  })

  t.test('the key’s thank-you URL when no _next of its origins', async (t) => {
    const p = await formKey('https://elsewhere.example/merci')
    const res = await post(p, { ...FORM, _next: 'https://evil.example/' })
    t.equal(res.status, 303)
    t.equal(res.headers.get('location'), 'https://elsewhere.example/merci')
  })

  t.test('multipart without a file; Referer alone when the browser sends no Origin', async (t) => {
    const p = await formKey()
    const body = new FormData()
    for (const [k, v] of Object.entries(FORM)) body.append(k, v)
    body.append('attachment', new Blob([]), '')
    const res = await fetch(`${s.url}/forms/${p}`, { method: 'POST', body, headers: { referer: `${SITE}/c` } })
    t.equal(res.status, 200)
    t.equal((await leadsOf(p)).length, 1)
  })

  t.test('Accept: application/json gets the API’s answers', async (t) => {
    const p = await formKey()
    const ok = await post(p, FORM, { accept: 'application/json' })
    t.equal(ok.status, 201)
    t.same(Object.keys((await ok.json()) as object).sort(), ['createdAt', 'id'])
    const bad = await post(p, { ...FORM, email: 'x' }, { accept: 'application/json' })
    t.equal(bad.status, 422)
    t.match(await bad.json(), { error: { code: 'invalid_request', details: { issues: [{ path: 'email' }] } } })
  })

  t.test('_idempotency: a resent form stores one lead; _ fields are never stored', async (t) => {
    const p = await formKey()
    for (let i = 0; i < 2; i++) t.equal((await post(p, { ...FORM, _idempotency: 'abc-1', _extra: 'x' })).status, 200)
    const leads = await leadsOf(p)
    t.equal(leads.length, 1)
    t.same(leads[0].fields, { 'team size': '12' })
  })
})

t.test('errors', async (t) => {
  t.test('an invalid form: 422, a page listing each problem, a link back, nothing stored', async (t) => {
    const p = await formKey()
    const { message: _, ...noMessage } = FORM
    const res = await post(p, { ...noMessage, email: 'not-an-email', name: '' })
    t.equal(res.status, 422)
    const page = await res.text()
    t.match(page, 'Please check the form')
    t.match(page, /<strong>email<\/strong>: must be an email address/)
    t.match(page, /<strong>name<\/strong>: must not be blank/)
    t.match(page, /<strong>message<\/strong>: is required/)
    t.match(page, `<a href="${SITE}/contact">`)
    t.equal((await leadsOf(p)).length, 0)
  })

  t.test('too many extra fields, a name too long: the page says which', async (t) => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, 'x']))
    const res = await post(prefix, { ...FORM, ...many, ['n'.repeat(65)]: 'x' })
    t.equal(res.status, 422)
    const page = await res.text()
    t.match(page, 'must have at most 50 fields')
    t.match(page, 'a field name must be at most 64 characters')
  })

  t.test('a file part: 415, a page saying files are not taken, nothing stored', async (t) => {
    const p = await formKey()
    const body = new FormData()
    for (const [k, v] of Object.entries(FORM)) body.append(k, v)
    body.append('cv', new Blob(['%PDF']), 'cv.pdf')
    const res = await fetch(`${s.url}/forms/${p}`, { method: 'POST', body, headers: { origin: SITE } })
    t.equal(res.status, 415)
    t.match(await res.text(), 'takes no files')
    t.equal((await leadsOf(p)).length, 0)
  })

  t.test('not a form body: 415', async (t) => {
    const res = await fetch(`${s.url}/forms/${prefix}`, {
      method: 'POST',
      body: '{}',
      headers: { origin: SITE, 'content-type': 'application/json' },
    })
    t.equal(res.status, 415)
  })

  t.test('a key not open to forms, or no key: 404 page', async (t) => {
    const p = await formKey()
    await setKeyForm(sql, { prefix: p, change: { open: false } })
    for (const path of [p, 'nope', 'ZZZZZZZZZZZZ']) {
      const res = await post(path, FORM)
      t.equal(res.status, 404, path)
      t.match(await res.text(), 'No form here')
    }
  })

  t.test('the key’s rate limit: 429 page', async (t) => {
    const p = await formKey(null, 1)
    t.equal((await post(p, FORM)).status, 200)
    const res = await post(p, FORM)
    t.equal(res.status, 429)
    t.match(await res.text(), 'Too many messages')
    t.equal((await leadsOf(p)).length, 1)
  })
})

t.test('security', async (t) => {
  t.test('another origin, or none: 403 page, nothing stored', async (t) => {
    const p = await formKey()
    const cases = [
      { origin: 'https://evil.example', referer: `${SITE}/contact` },
      { origin: 'null', referer: 'https://evil.example/' },
      { origin: 'https://shop.example.evil.example', referer: '' },
    ]
    for (const headers of cases) {
      const res = await post(p, FORM, headers)
      t.equal(res.status, 403, JSON.stringify(headers))
      t.match(await res.text(), 'may only be sent from the website it belongs to')
    }
    const bare = await fetch(`${s.url}/forms/${p}`, { method: 'POST', body: new URLSearchParams(FORM) })
    t.equal(bare.status, 403, 'neither Origin nor Referer')
    t.equal((await leadsOf(p)).length, 0)
  })

  t.test('the honeypot keeps the lead as spam, answered as usual', async (t) => {
    const p = await formKey()
    t.equal((await post(p, { ...FORM, website: 'http://spam.example' })).status, 200)
    t.match(await leadsOf(p), [{ spam: true }])
  })

  t.test('hostile values are escaped on the pages', async (t) => {
    const evil = '<script>alert(1)</script>'
    const res = await post(prefix, { ...FORM, email: evil, [evil]: 'x'.repeat(10_001) }, { referer: `${SITE}/"><x` })
    const page = await res.text()
    t.equal(res.status, 422)
    t.notMatch(page, '<script>')
    t.match(page, '&lt;script&gt;')
    t.notMatch(page, '"><x')
  })
})
