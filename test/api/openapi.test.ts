import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import createClient from 'openapi-fetch'
import t from 'tap'
import * as v from 'valibot'
import type { paths } from '../../clients/typescript/src/openapi.js'
import { buildOpenApi } from '../../src/api/openapi.js'
import { route } from '../../src/http/route.js'
import { CLIENT_TYPES, clientTypes } from '../support/client-types.js'
import { resolve } from '../support/json-schema.js'
import { issueKey, startTestServer } from '../support/server.js'

const run = promisify(execFile)
const s = await startTestServer(t)
const key = await issueKey(s.db.sql, { email: 'doc@example.com', name: 'Doc' })
const res = await s.fetch('/api/v1/openapi.json', { key })
const text = await res.text()
const doc = JSON.parse(text)
const dir = mkdtempSync(join(tmpdir(), 'studio-openapi-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('the document is served, behind a key', async (t) => {
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'application/json')
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.version, '1.0.0')
  t.same(doc.servers, [{ url: '/api/v1' }])
  t.same(doc.components.securitySchemes.bearerAuth, {
    type: 'http',
    scheme: 'bearer',
    description: doc.components.securitySchemes.bearerAuth.description,
  })
  t.equal((await s.fetch('/api/v1/openapi.json')).status, 401)
})

t.test('it carries the constraints of the validating schemas', async (t) => {
  const lead = doc.components.schemas.LeadInput
  t.same(lead.required.sort(), ['email', 'message', 'name', 'service'])
  t.equal(lead.additionalProperties, false)
  t.equal(lead.properties.name.maxLength, 200)
  t.equal(lead.properties.email.format, 'email')
  t.match(doc.paths['/leads'].post.responses['422'], {
    description: /invalid_request/,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  })
  t.ok(doc.paths['/me'].get.responses['401'])
  t.same(doc.components.schemas.Caller.properties.plan.enum, ['FREE', 'STARTER', 'PRO', 'ENTERPRISE'])
})

t.test('every error response of the spec’s routes refers to the one Error schema, its details typed', async (t) => {
  const error = doc.components.schemas.Error.properties.error
  t.same(error.required, ['code', 'message'])
  t.ok(error.properties.code.enum.includes('invalid_request'))
  t.same(error.properties.details.properties.issues.items.required, ['path', 'message'])
  const schemas = ['/me', '/leads', '/ai/completions'].flatMap((p) =>
    Object.values(doc.paths[p] as Record<string, any>).flatMap((op) =>
      Object.entries(op.responses ?? {})
        .filter(([status]) => Number(status) >= 400)
        .map(([, r]: [string, any]) => (r.$ref ? resolve(doc, r.$ref) : r).content['application/json'].schema)
    )
  )
  t.ok(schemas.length > 20)
  t.ok(schemas.every((s) => s.$ref === '#/components/schemas/Error'))
})

t.test('each error response declares the headers it is sent with, and only those', async (t) => {
  const responses = doc.components.responses
  const headersOf = (status: string) => {
    const r = doc.paths['/leads'].post.responses[status]
    return Object.keys((r.$ref ? resolve(doc, r.$ref) : r).headers)
  }
  t.ok(headersOf('401').includes('WWW-Authenticate'))
  t.ok(headersOf('405').includes('Allow'))
  t.ok(headersOf('429').includes('Retry-After'))
  t.ok(headersOf('429').includes('RateLimit'))
  for (const status of ['401', '403', '404', '405']) t.notOk(headersOf(status).includes('RateLimit'), status)
  t.ok(Object.keys(responses.NotFound.headers).includes('x-request-id'))
})

t.test("each string's pattern and maxLength take exactly what the server takes", async (t) => {
  const { LeadInput } = await import('../../src/api/schemas.js')
  const props = doc.components.schemas.LeadInput.properties
  const samples = [
    '',
    ' ',
    '\t\n',
    'a',
    ' a ',
    '\u00a0x',
    'a\u0000b',
    'a\ud800b',
    '\udfff',
    '\ud83d\ude00',
    '😀'.repeat(50),
    '😀'.repeat(51),
    'x'.repeat(200),
    'x'.repeat(201),
    "o'brien@example.com",
    'a@123.123.123.123',
    'a@b',
    'a b@c.d',
    'a@-b.c',
    '"q"@example.com',
    'a@b.c\u0000',
    'a..b@c.d',
    'é@example.com',
  ]
  const base = { name: 'n', email: 'n@example.com', service: 's', message: 'm' }
  for (const field of ['name', 'email', 'phone', 'company']) {
    const { pattern, maxLength, minLength } = props[field]
    for (const flags of ['', 'u']) {
      const re = new RegExp(pattern, flags)
      for (const sample of samples) {
        const documented = re.test(sample) && [...sample].length <= maxLength && [...sample].length >= minLength
        const served = v.safeParse(LeadInput, { ...base, [field]: sample }).success
        t.equal(documented, served, `${field} ${JSON.stringify(sample)} /${flags}`)
      }
    }
  }
  const completion = doc.components.schemas.CompletionRequest.properties
  t.notOk(completion.system.maxLength, 'no maxLength that the body limit reaches first')
  t.notOk(completion.messages.items.properties.content.maxLength)
  t.match(doc.info.description, /STUDIO_BODY_LIMIT/)
})

t.test('a streamed 200 describes its events in a schema tools read', async (t) => {
  const stream = doc.paths['/ai/completions'].post.responses['200'].content['text/event-stream']
  t.same(
    stream.schema.anyOf.map((s: { $ref: string }) => s.$ref).sort(),
    ['#/components/schemas/CompletionDelta', '#/components/schemas/CompletionResponse', '#/components/schemas/Error'],
    "any of the events' data"
  )
  t.match(stream.schema.description, /x-events/)
  t.same(Object.keys(stream['x-events']).sort(), ['delta', 'done', 'error'], 'each by its event name')
})

t.test('the top-level webhooks map documents every event type with its envelope', async (t) => {
  const { EVENT_TYPES } = await import('../../src/outbox/catalogue.js')
  t.same(Object.keys(doc.webhooks).sort(), [...EVENT_TYPES].sort())
  const schemaOf = (type: string): any =>
    resolve(doc, doc.webhooks[type].post.requestBody.content['application/json'].schema.$ref)
  for (const type of EVENT_TYPES) {
    const envelope = schemaOf(type)
    t.same(envelope.required.sort(), ['data', 'timestamp', 'type'], type)
    t.equal(envelope.properties.type.const, type)
    t.equal(envelope.properties.timestamp.format, 'date-time')
    const headers = doc.webhooks[type].post.parameters.map((p: { name: string }) => p.name)
    t.same(headers, ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
  }
  const lead = schemaOf('lead.created').properties.data
  const input = doc.components.schemas.LeadInput
  // All but the honeypot: a lead that fills it raises no event.
  for (const field of Object.keys(input.properties).filter((f) => f !== 'website'))
    t.ok(lead.properties[field], `lead.created carries ${field}`)
  t.notOk(lead.properties.website, 'lead.created has no honeypot')
  t.same(lead.properties.utm.type, 'object')
  t.same(lead.required.sort(), [...input.required, 'id', 'createdAt', 'keyPrefix'].sort())
  for (const type of EVENT_TYPES.filter((type) => type.startsWith('key.'))) {
    const data = schemaOf(type).properties.data
    t.ok(
      ['prefix', 'name', 'who'].every((f) => data.required.includes(f)),
      type
    )
    t.notOk(
      Object.keys(data.properties).some((f) => /secret|key$/i.test(f)),
      `${type} has no secret`
    )
  }
})

// redocly lint's report on a document: its problems of severity error, and its count of them.
async function lint(name: string, document: string) {
  const file = join(dir, name)
  writeFileSync(file, document)
  const out = await run(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--format=json'], {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  }).catch((e) => e)
  const report = JSON.parse(out.stdout)
  return {
    errors: report.problems.filter((p: { severity: string }) => p.severity === 'error'),
    count: report.totals.errors,
  }
}

t.test('every operation, OPTIONS included, has its own operationId', async (t) => {
  const ids = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((item) =>
    Object.entries(item)
      .filter(([m]) => m !== 'parameters')
      .map(([, op]) => op.operationId)
  )
  t.ok(
    ids.every((id) => typeof id === 'string' && /^[A-Za-z]\w*$/.test(id)),
    ids.join(', ')
  )
  t.equal(new Set(ids).size, ids.length, 'no two alike')
  t.equal(doc.paths['/messages/count_tokens'].options.operationId, 'optionsMessagesCountTokens')
})

t.test('redocly lint finds no error', async (t) => {
  const { errors, count } = await lint('openapi.json', text)
  t.same(errors, [], 'no errors')
  t.equal(count, 0)
})

t.test('a route with a path parameter is published as a template with its parameter', async (t) => {
  const thing = route({
    method: 'GET',
    path: '/api/v1/things/:id/parts/:part',
    uses: ['key'],
    summary: 'A part of a thing',
    operationId: 'getThingPart',
    responses: { 200: { description: 'The part' } },
    handle: () => ({ status: 200 }),
  })
  const built = buildOpenApi([thing])
  const paths = built.paths as Record<string, any>
  t.same(Object.keys(paths), ['/things/{id}/parts/{part}'], 'no `:id` left')
  t.same(paths['/things/{id}/parts/{part}'].parameters, [
    { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'part', in: 'path', required: true, schema: { type: 'string' } },
  ])
  t.notOk(doc.paths['/me'].parameters, 'a path without one has none')
  const widget = buildOpenApi([
    route({ ...thing, path: '/api/v1/widgets/:id', params: { id: v.pipe(v.string(), v.uuid()) } }),
  ]).paths as Record<string, any>
  t.same(
    widget['/widgets/{id}'].parameters,
    [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
    "a parameter's schema is the one the route declares"
  )
  const { errors } = await lint('things.json', JSON.stringify(built))
  t.same(errors, [], 'redocly lint finds no error')
})

t.test('the TypeScript client’s committed types are generated from the served document', async (t) => {
  t.equal(
    readFileSync(CLIENT_TYPES, 'utf8'),
    await clientTypes(doc),
    'run `npm run gen:client` after changing a schema'
  )
})

t.test('a typed client works against the live server', async (t) => {
  const client = createClient<paths>({ baseUrl: `${s.url}/api/v1`, headers: { authorization: `Bearer ${key}` } })
  const me = await client.GET('/me')
  t.equal(me.response.status, 200)
  t.equal(me.data?.user?.email, 'doc@example.com')
  t.equal(me.data?.user?.name, 'Doc')
  const lead = await client.POST('/leads', {
    body: { name: 'N', email: 'n@example.com', service: 's', message: 'm', utm: { campaign: 'c' } },
  })
  t.equal(lead.response.status, 201)
  t.match(lead.data?.id, /^[0-9a-f-]{36}$/)
  const bad = await client.POST('/leads', { body: { name: 'N', email: 'nope', service: 's', message: 'm' } })
  t.equal(bad.response.status, 422)
  t.equal(bad.error?.error.code, 'invalid_request')
})
