import t from 'tap'
import { issueKey, startTestServer } from '../support/server.js'

const s = await startTestServer(t)
const sql = s.db.sql
const key = await issueKey(sql, { email: 'ann@example.com', name: 'Ann', role: 'admin', plan: 'PRO' })
const lonely = await issueKey(sql, { plan: 'STARTER' })

const errorOf = async (r: Response) => {
  t.equal(r.headers.get('content-type'), 'application/json')
  const body = (await r.json()) as { error: { code: string; message: string; details?: Record<string, unknown> } }
  t.type(body.error.code, 'string')
  t.type(body.error.message, 'string')
  return body.error
}

t.test('health and readiness need no key', async (t) => {
  const h = await s.fetch('/healthz')
  t.equal(h.status, 200)
  t.same(await h.json(), { status: 'ok' })
  const r = await s.fetch('/readyz')
  t.equal(r.status, 200)
  t.same(await r.json(), { status: 'ready', details: { rate_limiter: 'memory', upstreams: { anthropic: 'ok' } } })
})

t.test('GET /me for a key with a user', async (t) => {
  const r = await s.fetch('/api/v1/me', { key })
  t.equal(r.status, 200)
  t.match(r.headers.get('x-request-id'), /.+/)
  t.equal(r.headers.get('cache-control'), 'no-store')
  t.equal(r.headers.get('x-content-type-options'), 'nosniff')
  t.equal(r.headers.get('x-powered-by'), null)
  const body = (await r.json()) as Record<string, any>
  t.match(body.user, { email: 'ann@example.com', name: 'Ann', role: 'admin' })
  t.match(body.user.id, /^[0-9a-f-]{36}$/)
  t.equal(body.plan, 'PRO')
})

t.test('GET /me for a key with no user answers user: null', async (t) => {
  const r = await s.fetch('/api/v1/me', { key: lonely })
  t.equal(r.status, 200)
  const body = (await r.json()) as Record<string, any>
  t.equal(body.user, null)
  t.equal(body.plan, 'STARTER')
})

t.test('a request id sent by the caller is echoed', async (t) => {
  const r = await s.fetch('/api/v1/me', { key, headers: { 'x-request-id': 'trace-123' } })
  t.equal(r.headers.get('x-request-id'), 'trace-123')
  const bad = await s.fetch('/api/v1/me', { key, headers: { 'x-request-id': 'no spaces allowed' } })
  t.not(bad.headers.get('x-request-id'), 'no spaces allowed')
})

const lead = {
  name: 'Grace Hopper',
  email: 'grace@example.com',
  service: 'consulting',
  message: 'We need a compiler.',
  phone: '+1 555 0100',
  company: 'Navy',
  budget: '10k-50k',
  locale: 'en-US',
  source: 'landing',
  utm: { source: 'newsletter', medium: 'email', campaign: 'fall' },
  fields: { 'team size': '12', heard: '' },
}

t.test('POST /leads stores every field and answers 201', async (t) => {
  const r = await s.fetch('/api/v1/leads', { method: 'POST', key, json: lead })
  t.equal(r.status, 201)
  const body = (await r.json()) as { id: string; createdAt: string }
  t.same(Object.keys(body).sort(), ['createdAt', 'id'])
  t.equal(new Date(body.createdAt).toISOString(), body.createdAt)
  const [row] =
    await sql`select l.*, k.account_id as key_account from leads l join api_keys k on k.prefix = l.key_prefix where l.id = ${body.id}`
  t.match(row, {
    name: lead.name,
    email: lead.email,
    service: lead.service,
    message: lead.message,
    phone: lead.phone,
    company: lead.company,
    budget: lead.budget,
    locale: lead.locale,
    source: lead.source,
    utm_source: 'newsletter',
    utm_medium: 'email',
    utm_campaign: 'fall',
    fields: { 'team size': '12', heard: '' },
  })
  t.equal(row.account_id, row.key_account)
  t.equal(row.created_at.toISOString(), body.createdAt)
})

t.test('POST /leads with only the required fields', async (t) => {
  const r = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key: lonely,
    json: { name: 'A', email: 'a@example.com', service: 's', message: 'm' },
  })
  t.equal(r.status, 201)
  const { id } = (await r.json()) as { id: string }
  const [row] = await sql`select phone, utm_source, fields from leads where id = ${id}`
  t.same(row, { phone: null, utm_source: null, fields: null })
})

t.test('what JSON Schema takes is taken: lengths in code points, addresses format: email accepts', async (t) => {
  const cases = [
    { phone: '📞'.repeat(50), name: '🙂'.repeat(200) },
    { email: "o'brien@example.com" },
    { email: 'a@123.123.123.123' },
    { email: 'first.last+tag@sub.example.co.uk' },
  ]
  for (const patch of cases) {
    const r = await s.fetch('/api/v1/leads', { method: 'POST', key, json: { ...lead, ...patch } })
    t.equal(r.status, 201, JSON.stringify(patch))
  }
})

const rules: [string, Record<string, unknown>, string, RegExp][] = [
  ['missing name', { name: undefined }, 'name', /required/],
  ['missing email', { email: undefined }, 'email', /required/],
  ['missing service', { service: undefined }, 'service', /required/],
  ['missing message', { message: undefined }, 'message', /required/],
  ['bad email', { email: 'not-an-email' }, 'email', /email/],
  ['blank name', { name: '   ' }, 'name', /blank/],
  ['name not a string', { name: 42 }, 'name', /string/],
  ['name too long', { name: 'x'.repeat(201) }, 'name', /at most 200/],
  ['message too long', { message: 'x'.repeat(10_001) }, 'message', /at most 10000/],
  ['phone too long', { phone: '1'.repeat(51) }, 'phone', /at most 50/],
  ['phone of 51 emoji', { phone: '📞'.repeat(51) }, 'phone', /at most 50/],
  ['empty name', { name: '' }, 'name', /blank/],
  ['email with a quoted local part', { email: '"a b"@example.com' }, 'email', /email/],
  ['email without a dot in its domain', { email: 'a@localhost' }, 'email', /email/],
  ['unknown field', { homepage: 'x' }, 'homepage', /not a known field/],
  ['utm not an object', { utm: 'x' }, 'utm', /object/i],
  ['unknown utm member', { utm: { term: 'x' } }, 'utm.term', /not a known field/],
  ['utm member not a string', { utm: { source: 1 } }, 'utm.source', /string/],
  ['NUL in a string', { message: 'a\u0000b' }, 'message', /NUL/],
  ['lone surrogate', { company: 'a\ud800b' }, 'company', /Unicode/],
  ['optional field null', { budget: null }, 'budget', /string/],
  ['fields not an object', { fields: 'x' }, 'fields', /object/i],
  ['a field not a string', { fields: { size: 12 } }, 'fields.size', /string/],
  ['a field nested', { fields: { size: { n: '1' } } }, 'fields.size', /string/],
  [
    'a field name too long',
    { fields: { ['n'.repeat(65)]: 'x' } },
    `fields.${'n'.repeat(65)}`,
    /field name must be at most 64/,
  ],
  ['a field value too long', { fields: { size: 'x'.repeat(10_001) } }, 'fields.size', /at most 10000/],
  [
    'too many fields',
    { fields: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, 'x'])) },
    'fields',
    /at most 50 fields/,
  ],
]
for (const [name, patch, path, message] of rules) {
  t.test(`422 invalid_request: ${name}`, async (t) => {
    const before = await sql`select count(*)::int as n from leads`
    const r = await s.fetch('/api/v1/leads', { method: 'POST', key, json: { ...lead, ...patch } })
    t.equal(r.status, 422)
    const e = await errorOf(r)
    t.equal(e.code, 'invalid_request')
    const issues = (e.details as { issues: { path: string; message: string }[] }).issues
    t.ok(
      issues.some((i) => i.path === path && message.test(i.message)),
      JSON.stringify(issues)
    )
    const after = await sql`select count(*)::int as n from leads`
    t.equal(after[0].n, before[0].n, 'nothing stored')
  })
}

t.test('422 lists every offending field', async (t) => {
  const r = await s.fetch('/api/v1/leads', { method: 'POST', key, json: { email: 'x' } })
  const e = await errorOf(r)
  const paths = (e.details as { issues: { path: string }[] }).issues.map((i) => i.path).sort()
  t.same(paths, ['email', 'message', 'name', 'service'])
})

t.test('422 invalid_json and non-object bodies', async (t) => {
  for (const body of ['{"name":', 'nope', '', '{"a":1}}']) {
    const r = await s.fetch('/api/v1/leads', {
      method: 'POST',
      key,
      body,
      headers: { 'content-type': 'application/json' },
    })
    t.equal(r.status, 422, body)
    t.equal((await errorOf(r)).code, 'invalid_json')
  }
  for (const body of ['[]', '"x"', '1', 'null']) {
    const r = await s.fetch('/api/v1/leads', {
      method: 'POST',
      key,
      body,
      headers: { 'content-type': 'application/json' },
    })
    t.equal(r.status, 422, body)
    t.equal((await errorOf(r)).code, 'invalid_request')
  }
})

t.test('415 without a JSON content type', async (t) => {
  for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded']) {
    const r = await s.fetch('/api/v1/leads', {
      method: 'POST',
      key,
      body: JSON.stringify(lead),
      headers: type ? { 'content-type': type } : {},
    })
    t.equal(r.status, 415, String(type))
    t.equal((await errorOf(r)).code, 'unsupported_media_type')
  }
  const ok = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    body: JSON.stringify(lead),
    headers: { 'content-type': 'application/json; charset=UTF-8' },
  })
  t.equal(ok.status, 201)
})

t.test('413 for a body over the limit', async (t) => {
  const r = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    json: { ...lead, message: 'x'.repeat(1024 * 1024 + 1) },
  })
  t.equal(r.status, 413)
  const e = await errorOf(r)
  t.equal(e.code, 'payload_too_large')
  t.same(e.details, { limit: 1048576 })
})

t.test('404 and 405', async (t) => {
  const nf = await s.fetch('/api/v1/nope', { key })
  t.equal(nf.status, 404)
  t.equal((await errorOf(nf)).code, 'not_found')
  const outside = await s.fetch('/me')
  t.equal(outside.status, 404)
  const na = await s.fetch('/api/v1/me', { method: 'DELETE', key })
  t.equal(na.status, 405)
  t.equal(na.headers.get('allow'), 'GET, HEAD')
  t.equal((await errorOf(na)).code, 'method_not_allowed')
  const leads = await s.fetch('/api/v1/leads', { method: 'PUT', key })
  t.equal(leads.status, 405)
  t.equal(leads.headers.get('allow'), 'POST, GET, HEAD')
})

t.test('the database holds only hashes of secrets', async (t) => {
  const rows = await sql`select * from api_keys`
  const dump = JSON.stringify(rows, (_, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v))
  for (const k of [key, lonely]) {
    const secret = k.split('_')[2]
    t.notOk(dump.includes(secret), 'no secret in api_keys')
    t.notOk(dump.includes(Buffer.from(secret).toString('hex')), 'not even as bytes')
  }
  for (const r of rows) t.equal(r.secret_sha256.length, 32)
})
