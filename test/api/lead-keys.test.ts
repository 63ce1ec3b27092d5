import t from 'tap'
import { createKey, revokeKey, rotateKey } from '../../src/accounts/key-lifecycle.js'
import { parseOrigins } from '../../src/accounts/origins.js'
import { SCOPES } from '../../src/accounts/scopes.js'
import { PREFLIGHT_MAX_AGE } from '../../src/http/cors.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { issuedKeys, startTestServer } from '../support/server.js'

// Browser-safe lead keys: a key whose only scope is leads:write names the web origins whose pages may post leads
// with it. The preflight (no key) is answered for any origin some key allows; the POST only from the key's own.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const { sql } = server.db
const SITE = 'https://shop.example'
const OTHER = 'https://evil.example'
// Made through the database, as another process would: this server learns of it through its key poll.
const cli = { kind: 'cli', osUser: 'test' } as const
const made = await createKey(sql, { email: 'site@example.com', scopes: ['leads:write'], origins: [SITE] }, cli)
issuedKeys.push(made.key)
const leadKey = made.key
const fullKey = await server.key({ email: 'site@example.com' })
const body = { name: 'Ada', email: 'ada@example.com', service: 'web', message: 'hello' }
const leads = async () => (await sql<{ n: number }[]>`select count(*)::int as n from leads`)[0].n
const preflight = (origin: string) =>
  server.fetch('/api/v1/leads', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  })
const post = (key: string, origin?: string) =>
  server.fetch('/api/v1/leads', { method: 'POST', key, json: body, headers: origin ? { origin } : {} })

t.test('origins are scheme, host and port: a trailing slash dropped, http only for loopback', async (t) => {
  t.same(parseOrigins('https://Example.com/, https://www.example.com:8443'), {
    origins: ['https://example.com', 'https://www.example.com:8443'],
  })
  t.same(parseOrigins('https://example.com:443,https://example.com'), { origins: ['https://example.com'] })
  t.same(parseOrigins('http://localhost:3000,http://127.0.0.1:8080,http://[::1]:9'), {
    origins: ['http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:9'],
  })
  for (const bad of [
    'http://example.com',
    'https://example.com/form',
    'https://example.com/?a=1',
    'https://example.com#x',
    'https://user:pw@example.com',
    'ftp://example.com',
    'example.com',
    '',
    'null',
  ])
    t.ok('error' in parseOrigins(bad), bad)
})

t.test('a preflight from an origin some key allows: 204 with the CORS headers', async (t) => {
  await eventually(async () => (await preflight(SITE)).headers.has('access-control-allow-origin'), {
    what: 'the new key’s origin reaches the preflight within a poll',
  })
  const res = await preflight(SITE)
  t.equal(res.status, 204)
  t.equal(res.headers.get('access-control-allow-origin'), SITE)
  t.equal(res.headers.get('access-control-allow-methods'), 'POST')
  t.equal(
    res.headers.get('access-control-allow-headers'),
    'authorization, content-type, idempotency-key, x-captcha-token'
  )
  t.equal(res.headers.get('access-control-max-age'), String(PREFLIGHT_MAX_AGE))
  t.match(res.headers.get('vary'), /Origin/)
})

t.test('a preflight from an origin no key allows: 204 without any CORS header', async (t) => {
  const res = await preflight(OTHER)
  t.equal(res.status, 204)
  t.equal(res.headers.get('access-control-allow-origin'), null)
  t.equal(res.headers.get('access-control-allow-methods'), null)
  t.match(res.headers.get('vary'), /Origin/)
})

t.test('POST from the key’s own origin: 201 with Access-Control-Allow-Origin and Vary', async (t) => {
  const before = await leads()
  const res = await post(leadKey, SITE)
  t.equal(res.status, 201)
  t.equal(res.headers.get('access-control-allow-origin'), SITE)
  t.match(res.headers.get('vary'), /Origin/)
  t.equal(await leads(), before + 1)
})

t.test('without Origin (a server, curl) the lead key is served as any key', async (t) => {
  const res = await post(leadKey)
  t.equal(res.status, 201)
  t.equal(res.headers.get('access-control-allow-origin'), null)
})

t.test('POST from another origin: 403 forbidden, the Error body, nothing stored', async (t) => {
  const before = await leads()
  for (const origin of [OTHER, 'null', `${SITE}.evil.example`, 'http://shop.example', `${SITE}:444`]) {
    const res = await post(leadKey, origin)
    t.equal(res.status, 403, origin)
    t.equal(res.headers.get('access-control-allow-origin'), null)
    const { error } = (await res.json()) as { error: { code: string; message: string; details: unknown } }
    t.equal(error.code, 'forbidden')
    t.match(error.message, 'may not be used from web pages of')
  }
  t.equal(await leads(), before)
})

t.test('a lead key: at most STUDIO_LEAD_KEY_ADDRESS_LIMIT (10) a minute per client address, then 429', async (t) => {
  const key = (await createKey(sql, { plan: 'FREE', scopes: ['leads:write'], origins: [SITE] }, cli)).key
  issuedKeys.push(key)
  await eventually(async () => (await post(key, SITE)).status === 201, { what: 'the key known' })
  for (let i = 1; i < 10; i++) t.equal((await post(key, i % 2 ? SITE : undefined)).status, 201, `request ${i + 1}`)
  const before = await leads()
  const res = await post(key, SITE)
  t.equal(res.status, 429)
  t.equal(res.headers.get('access-control-allow-origin'), SITE, 'the page can read the refusal')
  t.ok(Number(res.headers.get('retry-after')) > 0)
  t.match(await res.json(), { error: { code: 'rate_limited', details: { limit: 10 } } })
  t.equal((await post(key)).status, 429, 'without Origin too')
  t.equal(await leads(), before, 'nothing stored')
  for (let i = 0; i < 12; i++)
    if ((await post(fullKey)).status !== 201) t.fail('a key without origins is not limited so')
})

t.test('from an origin some key allows, a refusal before the key is known can be read by the page too', async (t) => {
  const res = await post('studio_AAAAAAAAAAAA_notakeynotakeynotakeynotakey', SITE)
  t.equal(res.status, 401)
  t.equal(res.headers.get('access-control-allow-origin'), SITE)
  t.equal(res.headers.get('vary'), 'Origin')
  const stranger = await post('studio_AAAAAAAAAAAA_notakeynotakeynotakeynotakey', OTHER)
  t.equal(stranger.status, 401)
  t.equal(stranger.headers.get('access-control-allow-origin'), null, 'an origin no key allows reads nothing')
})

t.test('a key with other scopes names no origin: any Origin is refused, nothing stored', async (t) => {
  const before = await leads()
  const res = await post(fullKey, SITE)
  t.equal(res.status, 403)
  t.match(await res.json(), { error: { code: 'forbidden', details: { origin: SITE } } })
  t.equal(await leads(), before)
  t.equal((await post(fullKey)).status, 201, 'without Origin as before')
})

t.test('origins are refused for a key with any other scope', async (t) => {
  for (const scopes of [undefined, ['leads:write', 'me:read'] as const, ['me:read'] as const])
    await t.rejects(createKey(sql, { plan: 'FREE', scopes, origins: [SITE] }), /only scope is leads:write/)
})

t.test('the audit entry of the key names its origins; a rotation keeps them', async (t) => {
  const [entry] = await sql<{ after: { origins?: string[] } }[]>`
    select after from audit_log where action = 'key.created' and target = ${made.prefix}`
  t.same(entry.after.origins, [SITE])
  const rotated = await rotateKey(sql, { prefix: made.prefix, graceSeconds: 0 })
  issuedKeys.push(rotated!.key)
  t.same(rotated!.origins, [SITE])
  await eventually(async () => (await post(rotated!.key, SITE)).status === 201, { what: 'the new key' })
})

t.test('once no key in force allows an origin, its preflight gets no CORS headers', async (t) => {
  const other = await createKey(sql, { plan: 'FREE', scopes: ['leads:write'], origins: ['https://gone.example'] })
  await eventually(async () => (await preflight('https://gone.example')).headers.has('access-control-allow-origin'))
  await revokeKey(sql, other.prefix)
  await eventually(async () => !(await preflight('https://gone.example')).headers.has('access-control-allow-origin'), {
    what: 'the revoked key’s origin leaves the set within a poll',
  })
  t.ok((await preflight(SITE)).headers.has('access-control-allow-origin'), 'the others stay')
})

t.test('the dashboard: an origins field on the create form, refused with other scopes', async (t) => {
  const env = { STUDIO_PUBLIC_URL: server.url }
  const owner = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'site@example.com']))
  const form = { name: 'site form', scopes: 'chosen', origins: 'https://www.shop.example/' }
  const refused = await owner.submit('/dashboard/keys', '/dashboard/keys', { ...form, scope: [...SCOPES] })
  t.equal(refused.status, 400)
  t.match(refused.text, 'only a key whose only scope is leads:write may have origins')
  const bad = await owner.submit('/dashboard/keys', '/dashboard/keys', {
    ...form,
    scope: 'leads:write',
    origins: 'http://www.shop.example',
  })
  t.equal(bad.status, 400)
  t.match(bad.text, 'http is only for loopback hosts')
  const ok = await owner.submit('/dashboard/keys', '/dashboard/keys', { ...form, scope: 'leads:write' })
  t.equal(ok.status, 200)
  const key = /studio_\w+_\w+/.exec(ok.text)?.[0]
  issuedKeys.push(key ?? '')
  t.match(ok.text, '<code>https://www.shop.example</code>')
  const [row] = await sql<{ origins: string[] }[]>`select origins from api_keys where name = 'site form'`
  t.same(row.origins, ['https://www.shop.example'])
})
