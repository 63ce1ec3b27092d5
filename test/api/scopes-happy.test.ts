import t from 'tap'
import { SCOPES, type Scope } from '../../src/accounts/scopes.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { scopedOperations } from '../support/scoped.js'
import { startTestServer } from '../support/server.js'

// A key does exactly what its scopes allow: every key made without scopes can do everything, a key with one scope
// does that one operation, and any key reads the OpenAPI document, which names each operation's scope.
const upstream = await fakeUpstream(t, json(200, anthropicMessage()))
const s = await startTestServer(t, { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: upstream.url })
const email = 'scopes@example.com'
const { operations, success } = scopedOperations(s)

t.test('a key made without scopes can do every operation', async (t) => {
  const key = await s.key({ email })
  for (const scope of SCOPES) {
    const r = await operations[scope](key)
    t.equal(r.status, success[scope], scope)
    await r.arrayBuffer()
  }
})

t.test('a key with one scope can do its operation', async (t) => {
  for (const scope of SCOPES) {
    const key = await s.key({ email, scopes: [scope] })
    const r = await operations[scope](key)
    t.equal(r.status, success[scope], scope)
    await r.arrayBuffer()
  }
})

t.test('every key reads the OpenAPI document', async (t) => {
  for (const scope of SCOPES) {
    const r = await s.fetch('/api/v1/openapi.json', { key: await s.key({ email, scopes: [scope] }) })
    t.equal(r.status, 200, scope)
    await r.arrayBuffer()
  }
})

t.test("the OpenAPI document names each operation's scope and declares its 403", async (t) => {
  const doc = (await (await s.fetch('/api/v1/openapi.json', { key: await s.key({ email }) })).json()) as any
  // Every operation the route list declares with a scope: its security names one of SCOPES, and it can answer 403.
  const scoped = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item)
      .filter(([, op]: [string, any]) => op.security?.[0]?.bearerAuth?.length)
      .map(([method, op]: [string, any]) => ({ name: `${method} ${path}`, op }))
  )
  t.ok(scoped.length >= SCOPES.length, scoped.map((o) => o.name).join(', '))
  for (const { name, op } of scoped) {
    const [scope] = op.security[0].bearerAuth as Scope[]
    t.ok(SCOPES.includes(scope), `${name} needs ${scope}`)
    const schema = op.responses['403'].content['application/json'].schema
    const error = schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema
    const codes = error.properties.error.properties.code.enum
    t.ok(codes.includes('forbidden'), `${name} answers 403 forbidden to a key without its scope`)
  }
  for (const scope of SCOPES)
    t.ok(
      scoped.some(({ op }) => op.security[0].bearerAuth[0] === scope),
      `${scope} is used`
    )
  const self = doc.paths['/openapi.json'].get
  t.same(self.security, [{ bearerAuth: [] }], 'the document needs no scope')
  t.notOk(self.responses['403'], 'and cannot answer 403')
})
