import fc from 'fast-check'
import { Agent, request } from 'node:http'
import t from 'tap'
import { issueKey, startTestServer } from '../support/server.js'
import { rawRequest } from '../support/raw.js'
import { recordResponse } from '../support/responses.js'

// Generated bodies and headers thrown at every endpoint of the live server: never a 500, always the Error body on
// errors, never a stack trace, the security headers on every answer, and the process still answers. Runs are bounded
// so the suite stays fast; a failure prints its seed and the shrunk counterexample.

const RUNS = 200
// The rate limit is not under test here: 1,400 requests with one key would meet the default (300 a minute).
const s = await startTestServer(t, { STUDIO_RATE_LIMIT: '100000' })
const key = await issueKey(s.db.sql, { email: 'fuzz@example.com' })
const agent = new Agent({ keepAlive: true, maxSockets: 4 })
t.teardown(() => agent.destroy())
const created: string[] = []

interface Sent {
  method: string
  path: string
  headers: [string, string][]
  body?: Buffer
}

function send({
  method,
  path,
  headers,
  body,
}: Sent): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((ok, fail) => {
    const flat = headers.flat()
    if (body !== undefined) flat.push('content-length', String(body.length))
    const req = request(
      { host: '127.0.0.1', port: s.port, method, path, headers: flat, agent, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          const contentType = res.headers['content-type'] ?? null
          const sent = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, String(value)]))
          const status = res.statusCode!
          recordResponse({ method, url: path, status, contentType, headers: sent, body: text, complete: true })
          ok({ status: res.statusCode!, headers: res.headers, text })
        })
        res.on('error', fail)
      }
    )
    req.on('error', fail)
    req.on('timeout', () => req.destroy(new Error('no answer in 10 s')))
    req.end(body)
  })
}

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
})
const anyText = fc.string({ unit: 'binary', maxLength: 40 })
const token = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/)
const wrongKey = fc
  .constantFrom(...key)
  .chain(() => fc.nat(key.length - 1))
  .map((i) => key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1))

const authorization = fc.oneof(
  fc.constant([] as [string, string][]),
  fc.constant([['authorization', `Bearer ${key}`]] as [string, string][]),
  fc
    .constantFrom('bearer', 'BEARER', 'Bearer', 'bEaReR', 'Basic', 'Token')
    .map((scheme) => [['authorization', `${scheme}  ${key} `]] as [string, string][]),
  wrongKey.map((k) => [['authorization', `Bearer ${k}`]] as [string, string][]),
  printable.map((v) => [['authorization', v]] as [string, string][]),
  fc.constant([
    ['authorization', `Bearer ${key}`],
    ['authorization', `Bearer ${key}`],
  ] as [string, string][])
)

const contentType = fc.oneof(
  fc.constant('application/json'),
  fc.constantFrom(
    'application/json; charset=utf-8',
    'application/problem+json',
    'text/plain',
    'application/json; charset=latin1',
    ''
  ),
  printable
)

// Headers that change how a request is read or answered, with odd values, besides arbitrary ones.
const extraHeaders = fc.array(
  fc.oneof(
    fc.tuple(token, printable),
    fc.tuple(
      fc.constantFrom(
        'x-request-id',
        'accept',
        'accept-encoding',
        'connection',
        'expect',
        'te',
        'upgrade',
        'idempotency-key',
        'range',
        'if-none-match',
        'origin'
      ),
      printable
    )
  ),
  { maxLength: 6 }
)

const leadValue = fc.oneof(anyText, fc.constant('x'), fc.constant('a@example.com'), fc.anything({ maxDepth: 2 }))
const leadLike = fc
  .record(
    {
      name: leadValue,
      email: leadValue,
      service: leadValue,
      message: leadValue,
      phone: leadValue,
      company: leadValue,
      utm: fc.oneof(fc.record({ source: leadValue, medium: leadValue }, { requiredKeys: [] }), leadValue),
    },
    { requiredKeys: [] }
  )
  .map((o) => Buffer.from(JSON.stringify(o)))
const validLead = fc
  .record({
    name: fc.stringMatching(/^\w{1,20}$/),
    service: printable.filter((x) => x.trim() !== ''),
    message: anyText.filter((x) => x.trim() !== '' && x.isWellFormed() && !x.includes('\0')),
  })
  .map((o) => Buffer.from(JSON.stringify({ ...o, email: 'l@example.com' })))

const body = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: leadLike },
  { weight: 2, arbitrary: validLead },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((j) => Buffer.from(j)) },
  { weight: 1, arbitrary: anyText.map((x) => Buffer.from(x)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.nat(90).map((n) => Buffer.from('['.repeat(n) + ']'.repeat(n))) }
)

function request$(path: fc.Arbitrary<string>, methods: string[]) {
  return fc
    .record({
      method: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...methods) },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS') }
      ),
      path,
      auth: authorization,
      type: fc.option(contentType, { nil: undefined }),
      host: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      extra: extraHeaders,
      body,
    })
    .map(
      ({ method, path, auth, type, host, extra, body }): Sent => ({
        method,
        path,
        headers: [
          ...(host ? [['host', '127.0.0.1'] as [string, string]] : []),
          ...auth,
          ...(type === undefined ? [] : [['content-type', type] as [string, string]]),
          ...extra,
        ],
        body: method === 'HEAD' ? undefined : body,
      })
    )
}

async function check(sent: Sent) {
  const r = await send(sent)
  const where = `${sent.method} ${sent.path} → ${r.status} ${r.text.slice(0, 200)}`
  if (r.status >= 500) throw new Error(`server error: ${where}`)
  if (
    r.headers['cache-control'] !== 'no-store' ||
    r.headers['x-content-type-options'] !== 'nosniff' ||
    r.headers['x-powered-by'] !== undefined
  ) {
    throw new Error(`security headers missing: ${where} ${JSON.stringify(r.headers)}`)
  }
  if (/\n\s+at |Error:|stack|node_modules|\.ts:\d/.test(r.text)) throw new Error(`a stack trace: ${where}`)
  if (r.status >= 400 && sent.method !== 'HEAD') {
    if (r.headers['content-type'] !== 'application/json') throw new Error(`not JSON: ${where}`)
    const e = JSON.parse(r.text)
    const keys = Object.keys(e.error ?? {})
    if (
      Object.keys(e).join() !== 'error' ||
      typeof e.error.code !== 'string' ||
      typeof e.error.message !== 'string' ||
      !keys.every((k) => ['code', 'message', 'details'].includes(k))
    ) {
      throw new Error(`not an Error body: ${where}`)
    }
  }
  if (r.status === 201) created.push(JSON.parse(r.text).id)
}

const endpoints: [string, fc.Arbitrary<string>, string[]][] = [
  ['GET /api/v1/me', fc.constant('/api/v1/me'), ['GET']],
  ['POST /api/v1/leads', fc.constant('/api/v1/leads'), ['POST']],
  ['GET /api/v1/openapi.json', fc.constant('/api/v1/openapi.json'), ['GET']],
  ['GET /healthz', fc.constant('/healthz'), ['GET']],
  ['GET /readyz', fc.constant('/readyz'), ['GET']],
  [
    'unknown paths',
    fc.oneof(
      fc.webPath(),
      fc.constantFrom('/api/v1/me/', '//api/v1/leads', '/api/v1/%6De', '/api/v1'),
      printable.map((p) => `/${encodeURI(p)}`)
    ),
    ['GET', 'POST'],
  ],
]

// Of the fully random requests to POST /leads only a few percent are valid (body, key, content type and Host all
// right at once), so a run could have none; these valid ones, their bodies still generated, make sure that every run
// stores some leads to check afterwards.
const validPost = validLead.map(
  (body): Sent => ({
    method: 'POST',
    path: '/api/v1/leads',
    headers: [
      ['host', '127.0.0.1'],
      ['authorization', `Bearer ${key}`],
      ['content-type', 'application/json'],
    ],
    body,
  })
)

for (const [name, path, methods] of endpoints) {
  t.test(`fuzz: ${name}`, async (t) => {
    const requests =
      name === 'POST /api/v1/leads'
        ? fc.oneof({ weight: 9, arbitrary: request$(path, methods) }, { weight: 1, arbitrary: validPost })
        : request$(path, methods)
    await fc.assert(fc.asyncProperty(requests, check), { numRuns: RUNS })
    t.pass(`${RUNS} generated requests`)
  })
}

t.test('fuzz: raw bytes after a request line', async (t) => {
  const prefix = fc.constantFrom(
    '',
    'GET /api/v1/me HTTP/1.1\r\n',
    'POST /api/v1/leads HTTP/1.1\r\nhost: x\r\n',
    'GET / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\n'
  )
  await fc.assert(
    fc.asyncProperty(prefix, fc.uint8Array({ maxLength: 200 }), async (p, bytes) => {
      const r = await rawRequest(s.port, [p, Buffer.from(bytes), '\r\n\r\n'], { timeoutMs: 5000 })
      if (r.status === 0) return // nothing answered yet: a request still incomplete, or a connection closed
      if (r.status >= 500) throw new Error(`server error ${r.status}`)
      if (r.status >= 400) {
        const e = JSON.parse(r.body)
        if (typeof e.error?.code !== 'string') throw new Error(`not an Error body: ${r.body}`)
      }
    }),
    { numRuns: 100 }
  )
  t.pass()
})

t.test('after the fuzz: the process answers, every 201 is stored, nothing failed inside', async (t) => {
  t.equal((await fetch(`${s.url}/healthz`)).status, 200)
  const rows = await s.db.sql`select id from leads where id = any(${created}::uuid[])`
  t.equal(rows.length, created.length, `${created.length} leads created by generated requests`)
  t.ok(created.length > 0, 'some generated leads were valid')
  t.same(
    s.log.lines.filter((l) => /"level":"error"/.test(l)),
    [],
    'no unhandled error logged'
  )
})
