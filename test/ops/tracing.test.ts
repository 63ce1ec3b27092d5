import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import t from 'tap'
import { noTracer, openTracer } from '../../src/ops/trace.js'
import { buildBundle, staticImports } from '../support/bundle.js'
import { eventually } from '../support/eventually.js'
import { anthropicMessage, anthropicStream, fakeUpstream, json, sse } from '../support/fake-upstream.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'

// Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, a request's span and its upstream attempts' spans reach an OTLP/HTTP
// receiver (a plain HTTP server here, reading the JSON the exporter posts to /v1/traces), the caller's traceparent is
// their parent and the attempts' traceparent goes upstream. Without it, nothing of OpenTelemetry is loaded.

// The SDK's own setting: batches go out every 20 ms instead of every 5 s (the test process's environment only).
process.env.OTEL_BSP_SCHEDULE_DELAY = '20'

type Value = { stringValue?: string; intValue?: string | number; boolValue?: boolean; arrayValue?: { values: Value[] } }
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: { key: string; value: Value }[]
  status?: { code?: number }
}
interface Span extends Omit<OtlpSpan, 'attributes'> {
  attributes: Record<string, unknown>
  service: unknown
}

const decoded = (v: Value): unknown =>
  v.arrayValue
    ? (v.arrayValue.values ?? []).map(decoded)
    : v.intValue !== undefined
      ? Number(v.intValue)
      : (v.stringValue ?? v.boolValue)
const attributes = (list: { key: string; value: Value }[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, decoded(a.value)]))

// The collector: every span posted to it, its attributes as an object.
const spans: Span[] = []
const posts: { path: string; type: string | undefined }[] = []
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    posts.push({ path: req.url!, type: req.headers['content-type'] })
    const body = JSON.parse(Buffer.concat(chunks).toString())
    for (const rs of body.resourceSpans ?? []) {
      const service = attributes(rs.resource?.attributes)['service.name']
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans as OtlpSpan[]) spans.push({ ...s, attributes: attributes(s.attributes), service })
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok))
t.teardown(() => new Promise<void>((ok) => receiver.close(() => ok())))
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

const anthropic = await fakeUpstream(t, json(200, anthropicMessage()))
const s = await startTestServer(
  t,
  {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_SERVICE_NAME: 'studio-traced',
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: anthropic.url,
    STUDIO_UPSTREAM_TIMEOUT_MS: '5000',
  },
  { backoff: () => 0 }
)
const key = await s.key()
t.beforeEach(() => anthropic.reset())

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('')
const traceparent = () => ({ traceId: hex(32), spanId: hex(16) })
const header = (p: { traceId: string; spanId: string }) => `00-${p.traceId}-${p.spanId}-01`

// The spans of one trace, once `n` of them have arrived.
const traceOf = (traceId: string, n: number) =>
  eventually(
    () => {
      const got = spans.filter((x) => x.traceId === traceId)
      return got.length >= n && got
    },
    { what: `${n} span(s) of trace ${traceId}` }
  )

t.test('a request is a server span, the child of the traceparent it came with', async (t) => {
  const parent = traceparent()
  const res = await s.fetch('/api/v1/me', { key, headers: { traceparent: header(parent) } })
  t.equal(res.status, 200)
  const [span] = await traceOf(parent.traceId, 1)
  t.match(span, {
    name: 'GET /api/v1/me',
    kind: 2,
    parentSpanId: parent.spanId,
    service: 'studio-traced',
    attributes: {
      'http.request.method': 'GET',
      'http.route': '/api/v1/me',
      'http.response.status_code': 200,
      'studio.request_id': res.headers.get('x-request-id'),
    },
  })
  t.notOk(span.status?.code, 'not an error')
  t.match(posts[0], { path: '/v1/traces', type: /json/ }, 'OTLP/HTTP JSON at <endpoint>/v1/traces')
})

t.test('without a traceparent (or with an invalid one), a request starts its own trace', async (t) => {
  const res = await s.fetch('/api/v1/nowhere', { headers: { traceparent: '00-zz-nope-01' } })
  t.equal(res.status, 404)
  const id = res.headers.get('x-request-id')
  const span = await eventually(() => spans.find((x) => x.attributes['studio.request_id'] === id))
  t.notOk(span.parentSpanId, 'no parent')
  t.equal(span.name, 'GET', 'no route matched: the method alone')
  t.equal(span.attributes['http.response.status_code'], 404)
})

t.test('each upstream attempt is a child span with the GenAI attributes; its traceparent goes upstream', async (t) => {
  anthropic.next(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'busy' } }))
  const parent = traceparent()
  const res = await s.fetch('/api/v1/ai/completions', {
    method: 'POST',
    key,
    headers: { traceparent: header(parent) },
    json: { messages: [{ role: 'user', content: 'Hi' }] },
  })
  t.equal(res.status, 200)
  const trace = await traceOf(parent.traceId, 3)
  const request = trace.find((x) => x.kind === 2)!
  t.match(request, { name: 'POST /api/v1/ai/completions', parentSpanId: parent.spanId })
  const attempts = trace
    .filter((x) => x.kind === 3)
    .sort((a, b) => +a.attributes['studio.attempt']! - +b.attributes['studio.attempt']!)
  t.equal(attempts.length, 2, 'two attempts: a 529, then the answer')
  const genAi = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': 'anthropic',
    'gen_ai.request.model': 'claude-sonnet-4-5',
  }
  for (const a of attempts)
    t.match(a, { name: 'chat claude-sonnet-4-5', parentSpanId: request.spanId, attributes: genAi })
  t.match(attempts[0], { status: { code: 2 }, attributes: { 'error.type': 'upstream_unavailable' } })
  t.same(Object.fromEntries(Object.entries(attempts[1].attributes).filter(([k]) => k.startsWith('gen_ai.'))), {
    ...genAi,
    'gen_ai.response.model': 'claude-sonnet-4-5-20250929',
    'gen_ai.usage.input_tokens': 12,
    'gen_ai.usage.output_tokens': 5,
    'gen_ai.response.finish_reasons': ['end_turn'],
  })
  t.same(
    anthropic.seen.map((x) => x.headers.traceparent),
    attempts.map((a) => `00-${parent.traceId}-${a.spanId}-01`),
    'each attempt sent its own span as the traceparent'
  )
})

t.test("a streamed answer's attempt span ends with the stream, with its counts", async (t) => {
  anthropic.next(sse(anthropicStream()))
  const parent = traceparent()
  const res = await s.fetch('/api/v1/ai/completions', {
    method: 'POST',
    key,
    headers: { traceparent: header(parent) },
    json: { messages: [{ role: 'user', content: 'Hi' }], stream: true },
  })
  t.equal(res.status, 200)
  t.match(await res.text(), /event: done/)
  const trace = await traceOf(parent.traceId, 2)
  const attempt = trace.find((x) => x.kind === 3)!
  t.match(attempt.attributes, {
    'gen_ai.system': 'anthropic',
    'gen_ai.usage.input_tokens': 12,
    'gen_ai.usage.output_tokens': 5,
    'gen_ai.response.finish_reasons': ['end_turn'],
  })
  t.equal(anthropic.seen[0].headers.traceparent, `00-${parent.traceId}-${attempt.spanId}-01`)
})

t.test('without OTEL_EXPORTER_OTLP_ENDPOINT nothing of OpenTelemetry is loaded', async (t) => {
  t.equal(await openTracer({ OTEL_SERVICE_NAME: 'x' } as never, s.log), noTracer, 'the no-op tracer, no import')
  // The bundle: OpenTelemetry is a chunk of its own that only a dynamic import names.
  const bin = await buildBundle(t)
  const dist = dirname(bin)
  const chunk = readdirSync(dist).find((f) => f.startsWith('otel-'))!
  t.ok(chunk, 'its own chunk')
  const texts = readdirSync(dist)
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => readFileSync(join(dist, f), 'utf8'))
  t.ok(
    texts.some((text) => text.includes(`import("./${chunk}")`)),
    'a dynamic import names it'
  )
  t.notOk(
    texts.some((text) => staticImports(text).includes(chunk)),
    'no static import does'
  )
  // And that bundle without the chunk at all still starts and serves.
  const dir = mkdtempSync(join(tmpdir(), 'studio-no-otel-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(dist, join(dir, 'dist'), { recursive: true, filter: (f) => basename(f) !== chunk })
  const server = await spawnServer(
    t,
    { STUDIO_DATA_DIR: join(dir, 'data') },
    { cli: [join(dir, 'dist', basename(bin))], cwd: dir }
  )
  t.equal((await fetch(`${server.url}/healthz`)).status, 200)
  t.equal((await fetch(`${server.url}/api/v1/me`)).status, 401)
  t.equal(await server.stop(), 0)
})

t.test('close() sends the spans not yet sent', async (t) => {
  // Batches every 10 minutes: only the shutdown's flush can have sent this span.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '600000'
  const late = await startTestServer(t, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
  const parent = traceparent()
  t.equal((await late.fetch('/healthz', { headers: { traceparent: header(parent) } })).status, 200)
  await late.close()
  t.match(
    spans.filter((x) => x.traceId === parent.traceId),
    [{ name: 'GET /healthz', service: 'studio-api' }],
    'there once close() returns'
  )
})
