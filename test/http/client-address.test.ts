import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { parseConfig } from '../../src/ops/config.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { issuedKeys, startTestServer } from '../support/server.js'

// The client's address behind a reverse proxy: with STUDIO_TRUSTED_PROXIES naming the proxy, the nearest address in
// X-Forwarded-For that is not a trusted proxy; without it, the TCP peer, whatever the header says. Shown through the
// per-address limit of a lead key (2 a minute here).
const dbEnv = await testDatabase(t)
const limit = { STUDIO_LEAD_KEY_ADDRESS_LIMIT: '2' }
const behindProxy = await startTestServer(t, { ...limit, STUDIO_TRUSTED_PROXIES: '127.0.0.1, ::1' }, { dbEnv })
const direct = await startTestServer(t, limit, { dbEnv })
const SITE = 'https://shop.example'
const cli = { kind: 'cli', osUser: 'test' } as const
const leadKey = async () => {
  const { key } = await createKey(behindProxy.db.sql, { scopes: ['leads:write'], origins: [SITE] }, cli)
  issuedKeys.push(key)
  return key
}
const body = { name: 'Ada', email: 'ada@example.com', service: 'web', message: 'hello' }
const post = (server: typeof direct, key: string, forwardedFor?: string) =>
  server.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    json: body,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  })
const known = (server: typeof direct, key: string) =>
  eventually(async () => (await post(server, key, '192.0.2.200')).status === 201, { what: 'the key known' })

t.test('STUDIO_TRUSTED_PROXIES takes addresses and CIDR ranges, and refuses anything else', async (t) => {
  t.ok(parseConfig({ STUDIO_TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1,::1, fd00::/8' }).STUDIO_TRUSTED_PROXIES)
  t.equal(parseConfig({}).STUDIO_TRUSTED_PROXIES, undefined, 'none by default: the TCP peer is the client')
  for (const bad of ['proxy.example', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '10.0.0.0/x', '1.2.3.4,'])
    t.throws(() => parseConfig({ STUDIO_TRUSTED_PROXIES: bad }), { message: /must be IP addresses or CIDR/ }, bad)
})

t.test('behind a trusted proxy, each forwarded client has its own count', async (t) => {
  const key = await leadKey()
  await known(behindProxy, key)
  t.equal((await post(behindProxy, key, '203.0.113.1')).status, 201)
  t.equal((await post(behindProxy, key, '203.0.113.1')).status, 201)
  t.equal((await post(behindProxy, key, '203.0.113.1')).status, 429, 'the third from one client')
  t.equal((await post(behindProxy, key, '203.0.113.2')).status, 201, 'another client is not refused')
  // What a client writes in front of the proxy's own entry does not change who it is.
  t.equal((await post(behindProxy, key, '198.51.100.9, 203.0.113.1')).status, 429, 'a prepended address')
  t.equal((await post(behindProxy, key, '203.0.113.3, 127.0.0.1')).status, 201, 'trusted hops are skipped')
  t.equal((await post(behindProxy, key, '203.0.113.3')).status, 201, 'the same client, its second')
  t.equal((await post(behindProxy, key, '203.0.113.3, 127.0.0.1')).status, 429, 'and its third')
})

t.test("a request the per-address limit refuses spends nothing of the key's own rate limit", async (t) => {
  const input = { scopes: ['leads:write' as const], origins: [SITE], limits: { rateLimit: 3 } }
  const { key } = await createKey(behindProxy.db.sql, input, cli)
  issuedKeys.push(key)
  await eventually(async () => (await post(behindProxy, key, '192.0.2.1')).status === 201, { what: 'the key known' })
  t.equal((await post(behindProxy, key, '192.0.2.1')).status, 201)
  for (let i = 0; i < 3; i++) t.equal((await post(behindProxy, key, '192.0.2.1')).status, 429, 'over the address limit')
  t.equal((await post(behindProxy, key, '192.0.2.2')).status, 201, "the key's third request in its minute")
  const over = await post(behindProxy, key, '192.0.2.3')
  t.equal(over.status, 429, "the fourth: the key's own limit")
  t.match(await over.json(), { error: { message: /with this key$/ } })
})

t.test('without trusted proxies, X-Forwarded-For is not believed', async (t) => {
  const key = await leadKey()
  await known(direct, key)
  t.equal((await post(direct, key, '203.0.113.1')).status, 201)
  t.equal((await post(direct, key, '203.0.113.2')).status, 429, 'one peer, whatever the header says')
})
