import t from 'tap'
import { crc32 as zlibCrc32 } from 'node:zlib'
import { checksumOf, crc32, generateKey, parseKey } from '../../src/accounts/key-format.js'
import { issueKey, startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'

const s = await startTestServer(t)
const key = await issueKey(s.db.sql, { email: 'auth@example.com' })
const revoked = await issueKey(s.db.sql, { email: 'auth@example.com' })
await s.db.sql`update api_keys set revoked_at = now(), updated_at = now() where prefix = ${revoked.split('_')[1]}`
const expired = await issueKey(s.db.sql, { email: 'auth@example.com', expiresAt: new Date(Date.now() - 1000) })
const unknown = generateKey().key
const [, prefix, secret] = key.split('_')
// A well-formed key (valid checksum) for an existing prefix, with another secret.
const wrongSecret = (() => {
  const other = generateKey().key.split('_')[2].slice(0, 22)
  const body = `studio_${prefix}_${other}`
  return body + checksumOf(body)
})()

t.test('keys: shape, checksum, entropy', async (t) => {
  const { key, prefix } = generateKey()
  t.match(key, /^studio_[0-9A-Za-z]{12}_[0-9A-Za-z]{28}$/)
  t.same(parseKey(key), { prefix, secret: key.split('_')[2] })
  const last = key.at(-1) === 'a' ? 'b' : 'a'
  t.equal(parseKey(key.slice(0, -1) + last), null, 'a changed checksum is refused')
  const mid = key.length - 10
  t.equal(
    parseKey(key.slice(0, mid) + (key[mid] === 'a' ? 'b' : 'a') + key.slice(mid + 1)),
    null,
    'a typo in the secret is refused'
  )
  t.equal(parseKey(key.replace('studio_', 'stud1o_')), null)
  t.equal(new Set(Array.from({ length: 1000 }, () => generateKey().key)).size, 1000)
  t.ok(parseKey(wrongSecret), 'the wrong-secret case passes the checksum')
})

const cases: [string, Record<string, string>][] = [
  ['missing header', {}],
  ['empty bearer', { authorization: 'Bearer ' }],
  ['not bearer', { authorization: `Basic ${key}` }],
  ['malformed', { authorization: 'Bearer hello' }],
  ['wrong label', { authorization: `Bearer other_${prefix}_${secret}` }],
  ['bad checksum', { authorization: `Bearer ${key.slice(0, -1)}${key.at(-1) === 'x' ? 'y' : 'x'}` }],
  ['unknown prefix', { authorization: `Bearer ${unknown}` }],
  ['wrong secret', { authorization: `Bearer ${wrongSecret}` }],
  ['revoked', { authorization: `Bearer ${revoked}` }],
  ['expired', { authorization: `Bearer ${expired}` }],
]

t.test('every 401 case answers the same body', async (t) => {
  const bodies = new Set<string>()
  for (const [name, headers] of cases) {
    for (const path of ['/api/v1/me', '/api/v1/openapi.json']) {
      const r = await s.fetch(path, { headers })
      t.equal(r.status, 401, `${name} ${path}`)
      t.equal(r.headers.get('content-type'), 'application/json')
      bodies.add(await r.text())
    }
    const r = await s.fetch('/api/v1/leads', { method: 'POST', headers, json: {} })
    t.equal(r.status, 401, `${name} leads`)
    bodies.add(await r.text())
  }
  t.same(
    [...bodies].map((b) => JSON.parse(b)),
    [{ error: { code: 'unauthorized', message: 'Missing or invalid API key' } }]
  )
})

t.test('Bearer in any case and extra spaces work', async (t) => {
  for (const h of [`Bearer ${key}`, `bearer ${key}`, `BEARER   ${key}  `]) {
    const r = await s.fetch('/api/v1/me', { headers: { authorization: h } })
    t.equal(r.status, 200, h)
  }
})

t.test('once a key was served from memory, its prefix with another secret is still refused', async (t) => {
  const get = (k: string) => s.fetch('/api/v1/me', { headers: { authorization: `Bearer ${k}` } })
  t.equal((await get(key)).status, 200)
  const near = key.slice(0, -1) + (key.at(-1) === 'x' ? 'y' : 'x')
  const misses: [string, string][] = [
    ['another secret', wrongSecret],
    ['the last character changed', near],
    ['one character more', `${key}x`],
    ['one character less', key.slice(0, -1)],
  ]
  for (const [name, k] of misses) t.equal((await get(k)).status, 401, name)
  t.equal((await get(key)).status, 200, 'the key itself still is')
})

t.test('a revocation reaches the running server', async (t) => {
  const k = await issueKey(s.db.sql, { email: 'later@example.com' })
  t.equal((await s.fetch('/api/v1/me', { key: k })).status, 200)
  await s.db.sql`update api_keys set revoked_at = now(), updated_at = now() where prefix = ${k.split('_')[1]}`
  // The first answer other than 200 (servers poll for revocations twice a second).
  const changed = async () => {
    const { status } = await s.fetch('/api/v1/me', { key: k })
    return status !== 200 && status
  }
  t.equal(await eventually(changed, { what: 'an answer other than 200' }), 401)
})

t.test('the key checksum is zlib’s CRC-32', async (t) => {
  const chars = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-'
  for (let i = 0; i < 2000; i++) {
    const s = Array.from({ length: i % 60 }, () => chars[Math.floor(Math.random() * chars.length)]).join('')
    if (crc32(s) !== zlibCrc32(s)) return t.fail(`differs for ${JSON.stringify(s)}`)
  }
  t.pass('2,000 strings')
})
