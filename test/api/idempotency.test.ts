import t from 'tap'
import { issueKey, startTestServer } from '../support/server.js'
import { head, rawRequest } from '../support/raw.js'

const s = await startTestServer(t)
const sql = s.db.sql
const key = await issueKey(sql, { email: 'idem@example.com' })
const sameAccount = await issueKey(sql, { email: 'idem@example.com' })
const otherAccount = await issueKey(sql, { email: 'else@example.com' })
const lead = {
  name: 'Ann',
  email: 'ann@example.com',
  service: 'audit',
  message: 'Hello',
  utm: { source: 'a', medium: 'b' },
}
const count = async (k: string) =>
  (await sql<{ n: number }[]>`select count(*)::int as n from leads where idempotency_key = ${k}`)[0].n
const total = async () => (await sql<{ n: number }[]>`select count(*)::int as n from leads`)[0].n

async function post(idem: string | undefined, body: unknown = lead, apiKey = key) {
  const r = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key: apiKey,
    json: body,
    headers: idem === undefined ? {} : { 'idempotency-key': idem },
  })
  return { status: r.status, replayed: r.headers.get('idempotent-replayed'), body: (await r.json()) as any }
}

t.test('a retry with the same key and body answers the first lead, without a second row', async (t) => {
  const first = await post('retry-1')
  t.equal(first.status, 201)
  t.equal(first.replayed, null)
  const again = await post('retry-1')
  t.equal(again.status, 201)
  t.same(again.body, first.body, 'same id and createdAt')
  t.equal(again.replayed, 'true')
  // The same body with its keys in another order is the same request.
  const reordered = await post('retry-1', {
    utm: { medium: 'b', source: 'a' },
    message: 'Hello',
    service: 'audit',
    email: 'ann@example.com',
    name: 'Ann',
  })
  t.same(reordered.body, first.body)
  const viaOtherKey = await post('retry-1', lead, sameAccount)
  t.same(viaOtherKey.body, first.body, 'keys are per account, not per API key')
  t.equal(await count('retry-1'), 1)
})

t.test('the same key with another body is refused', async (t) => {
  const first = await post('reuse-1')
  t.equal(first.status, 201)
  const before = await total()
  for (const body of [
    { ...lead, message: 'Other' },
    { ...lead, phone: '1' },
    { ...lead, utm: undefined },
  ]) {
    const r = await post('reuse-1', body)
    t.equal(r.status, 422)
    t.equal(r.body.error.code, 'idempotency_key_reused')
  }
  t.equal(await total(), before)
})

t.test('keys are scoped per account', async (t) => {
  const mine = await post('scoped-1')
  const theirs = await post('scoped-1', { ...lead, message: 'different' }, otherAccount)
  t.equal(theirs.status, 201)
  t.not(theirs.body.id, mine.body.id)
  t.equal(await count('scoped-1'), 2)
})

t.test('concurrent requests with one key create one lead', async (t) => {
  const answers = await Promise.all(Array.from({ length: 12 }, () => post('race-1')))
  t.same(new Set(answers.map((a) => a.status)), new Set([201]))
  t.equal(new Set(answers.map((a) => a.body.id)).size, 1, 'one id')
  t.equal(answers.filter((a) => a.replayed === null).length, 1, 'one creation, the rest replays')
  t.equal(await count('race-1'), 1)
})

t.test('after 24 hours the key is released', async (t) => {
  const first = await post('old-1')
  await sql`update leads set created_at = now() - interval '25 hours' where id = ${first.body.id}`
  const later = await post('old-1', { ...lead, message: 'a new one' })
  t.equal(later.status, 201)
  t.equal(later.replayed, null)
  t.not(later.body.id, first.body.id)
  t.equal(await count('old-1'), 1)
  const [old] = await sql`select idempotency_key from leads where id = ${first.body.id}`
  t.equal(old.idempotency_key, null, 'the old lead is kept, without its key')
})

t.test('an invalid body does not take the key', async (t) => {
  const bad = await post('invalid-1', { ...lead, email: 'nope' })
  t.equal(bad.status, 422)
  t.equal(bad.body.error.code, 'invalid_request')
  const good = await post('invalid-1')
  t.equal(good.status, 201)
  t.equal(good.replayed, null)
})

t.test('the key must be 1 to 255 printable characters, sent once', async (t) => {
  const before = await total()
  for (const [idem, message] of [
    ['', /empty/],
    ['k'.repeat(256), /at most 255/],
    ['caf\u00e9', /ASCII/],
  ] as const) {
    const r = await post(idem)
    t.equal(r.status, 422, JSON.stringify(idem.slice(0, 20)))
    t.equal(r.body.error.code, 'invalid_request')
    t.match(r.body.error.details.issues, [{ path: 'Idempotency-Key', message }])
  }
  const twice = await rawRequest(
    s.port,
    head('POST', '/api/v1/leads', {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': 'a',
      'Idempotency-Key': 'b',
      'content-length': Buffer.byteLength(JSON.stringify(lead)),
    }) + JSON.stringify(lead)
  )
  t.equal(twice.status, 422)
  t.match(JSON.parse(twice.body).error.details.issues, [{ path: 'Idempotency-Key', message: /once/ }])
  t.equal(await total(), before)
  const longest = await post('k'.repeat(255))
  t.equal(longest.status, 201)
})

t.test('without a key every request creates a lead', async (t) => {
  const a = await post(undefined)
  const b = await post(undefined)
  t.not(a.body.id, b.body.id)
})

t.test('the OpenAPI document describes the header', async (t) => {
  const doc = (await (await s.fetch('/api/v1/openapi.json', { key })).json()) as any
  const op = doc.paths['/leads'].post
  t.match(op.parameters, [
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
  ])
  t.match(op.parameters[0].description, /24 hours/)
  t.ok(op.responses['422'].description.includes('idempotency_key_reused'))
  t.ok(op.responses['201'].headers['Idempotent-Replayed'])
})
