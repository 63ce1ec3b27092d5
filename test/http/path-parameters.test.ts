import type { AddressInfo } from 'node:net'
import t from 'tap'
import * as v from 'valibot'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { createKeyStore } from '../../src/accounts/auth.js'
import { route } from '../../src/http/route.js'
import { createHttpServer } from '../../src/http/server.js'
import { SlidingWindow } from '../../src/limits/limits.js'
import { parseConfig } from '../../src/ops/config.js'
import { createLogger } from '../../src/ops/log.js'
import { openDatabase } from '../../src/storage/db.js'
import { migrate } from '../../src/storage/migrate.js'
import { testDatabase } from '../support/database.js'

// A route with path parameters, served by the real pipeline (key step included) over a real database: the routes
// here are this test's own, so their answers are fetched with the plain fetch, outside the contract check of the
// served OpenAPI document (responses-check.ts).
const config = parseConfig({ PORT: '0', ...(await testDatabase(t)) })
const db = await openDatabase(config)
t.teardown(() => db.close())
await migrate(db.sql)
const lines: string[] = []
const sink = { write: (line: string) => void lines.push(line) }
const log = createLogger('debug', { out: sink, err: sink })
const keys = createKeyStore(db.sql, log)
t.teardown(() => keys.close())
const { key } = await createKey(db.sql, { email: 'params@example.com' })

const routes = [
  route({
    method: 'GET',
    path: '/api/v1/things/:id',
    uses: ['key'],
    summary: 'A thing',
    handle: ({ params }) => ({ status: 200, body: { params } }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/things/:id/parts/:part',
    uses: ['key'],
    summary: 'A part of a thing',
    handle: ({ params }) => ({ status: 200, body: { params } }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/widgets/:id',
    uses: ['key'],
    params: { id: v.pipe(v.string(), v.uuid()) },
    summary: 'A widget, by its UUID',
    handle: ({ params }) => ({ status: 200, body: { params } }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/things',
    uses: ['key'],
    summary: 'All things',
    handle(exchange) {
      // A handler that writes into its params must not reach another request's.
      const before = { ...exchange.params }
      exchange.params.id = 'written'
      return { status: 200, body: { params: before } }
    },
  }),
]
const limiter = new SlidingWindow(1000, 60_000)
const authFailures = new SlidingWindow(1000, 60_000)
const { server } = createHttpServer({ config, keys, log, routes, limiter, authFailures })
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
t.teardown(() => new Promise((ok) => server.close(ok)))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const get = async (path: string, withKey = true) => {
  const res = await fetch(base + path, { headers: withKey ? { authorization: `Bearer ${key}` } : {} })
  return { status: res.status, requestId: res.headers.get('x-request-id'), body: (await res.json()) as any }
}

t.test('happy: the handler reads the path parameters, percent-decoded', async (t) => {
  const res = await get('/api/v1/things/abc')
  t.equal(res.status, 200)
  t.same(res.body, { params: { id: 'abc' } })
  t.same((await get('/api/v1/things/caf%C3%A9%20au%20lait')).body, { params: { id: 'café au lait' } })
  t.same((await get('/api/v1/things/t1/parts/p%2F2')).body, { params: { id: 't1', part: 'p/2' } })
  t.same((await get('/api/v1/things')).body, { params: {} }, 'an exact path has none')
  t.same((await get('/api/v1/things')).body, { params: {} }, 'each request its own')
})

t.test('error: a percent-escape that is not UTF-8 is a 400 with the Error body, not a 500', async (t) => {
  for (const path of ['/api/v1/things/%E0', '/api/v1/things/%ZZ', '/api/v1/things/ok/parts/%C3%28']) {
    const res = await get(path)
    t.equal(res.status, 400, path)
    t.equal(res.body.error.code, 'bad_request', path)
    t.match(res.body.error.message, /percent-escape/, path)
    t.ok(res.requestId, 'with its request id')
  }
  t.notOk(
    lines.some((l) => l.includes('unhandled error')),
    'nothing logged as a fault'
  )
})

t.test('happy: a parameter its schema takes reaches the handler', async (t) => {
  const id = '0b6f3c1e-2d4a-4f8b-9c7d-1e2f3a4b5c6d'
  const res = await get(`/api/v1/widgets/${id}`)
  t.equal(res.status, 200)
  t.same(res.body, { params: { id } })
})

t.test('error: a parameter its schema refuses names nothing: 404 with the Error body', async (t) => {
  const res = await get('/api/v1/widgets/not-a-uuid')
  t.equal(res.status, 404)
  t.equal(res.body.error.code, 'not_found')
  t.match(res.body.error.message, /id "not-a-uuid"/)
})

t.test('error: a path no route matches is a 404, a method the path lacks a 405', async (t) => {
  t.equal((await get('/api/v1/things/a/b')).body.error.code, 'not_found')
  t.equal((await get('/api/v1/things/a/parts/')).body.error.code, 'not_found')
  const res = await fetch(`${base}/api/v1/things/abc`, { method: 'POST', headers: { authorization: `Bearer ${key}` } })
  t.equal(res.status, 405)
  t.equal(res.headers.get('allow'), 'GET, HEAD')
})

t.test('security: a parameter is checked behind the key, and stays inside its segment', async (t) => {
  const anonymous = await get('/api/v1/things/abc', false)
  t.equal(anonymous.status, 401)
  t.notMatch(JSON.stringify(anonymous.body), /abc/, 'nothing of the parameter is echoed')
  t.same((await get('/api/v1/things/..%2F..%2Fme')).body, { params: { id: '../../me' } }, 'an encoded slash is data')
  t.equal((await get('/api/v1/things/%E0', false)).status, 400, 'a malformed path is refused before the key')
})
