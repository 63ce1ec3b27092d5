import t, { type Test as Tap } from 'tap'
import { createMetrics } from '../../src/ops/service-metrics.js'
import { issuedKeys, logLines, startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'

const s = await startTestServer(t, { STUDIO_METRICS_PORT: '0' })
const key = await s.key({ email: 'ops@example.com' })
const [, prefix] = key.split('_')
const [{ account_id: accountId }] = await s.db.sql<
  { account_id: string }[]
>`select account_id from api_keys where prefix = ${prefix}`

type Line = Record<string, unknown>
const requestLines = () => s.log.lines.map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request')

// The access line is written when the response closes on the server, which may come just after the client has
// read the answer.
async function lineFor(id: string): Promise<Line> {
  return eventually(() => requestLines().find((l) => l.id === id), { what: `an access line for ${id}` })
}

const FIELDS = ['time', 'level', 'msg', 'id', 'method', 'route', 'status', 'ms', 'key_prefix', 'account_id']
const lead = {
  name: 'Sensitive Name',
  email: 'lead-secret@example.com',
  service: 'svc',
  message: 'a very private message',
  company: 'Hush Corp',
}

t.test('one JSON line per request: its shape', async (t) => {
  const cases: [string, string, RequestInit & { key?: string; json?: unknown }, Line][] = [
    [
      'me',
      '/api/v1/me',
      { key },
      { method: 'GET', route: '/api/v1/me', status: 200, key_prefix: prefix, account_id: accountId },
    ],
    [
      'lead',
      '/api/v1/leads',
      { method: 'POST', key, json: lead },
      { method: 'POST', route: '/api/v1/leads', status: 201, key_prefix: prefix, account_id: accountId },
    ],
    [
      'invalid',
      '/api/v1/leads',
      { method: 'POST', key, json: { ...lead, email: 'nope' } },
      { route: '/api/v1/leads', status: 422, key_prefix: prefix },
    ],
    [
      'unauthorized',
      '/api/v1/me',
      { key: key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a') },
      { route: '/api/v1/me', status: 401, key_prefix: null, account_id: null },
    ],
    ['not found', `/api/v1/nope?token=${key}`, { key }, { method: 'GET', route: null, status: 404, key_prefix: null }],
    ['not allowed', '/api/v1/me', { method: 'DELETE', key }, { method: 'DELETE', route: null, status: 405 }],
    ['health', '/healthz', {}, { route: '/healthz', status: 200, key_prefix: null, account_id: null }],
  ]
  for (const [name, path, init, expected] of cases) {
    const id = `ops-${name.replace(/ /g, '-')}`
    const r = await s.fetch(path, { ...init, headers: { 'x-request-id': id } })
    t.equal(r.status, expected.status, name)
    await r.arrayBuffer()
    const line = await lineFor(id)
    t.same(Object.keys(line), FIELDS, `${name}: the fields, in order`)
    t.match(line, { level: 'info', msg: 'request', id, ...expected }, name)
    t.equal(new Date(line.time as string).toISOString(), line.time, `${name}: time is ISO 8601`)
    t.type(line.ms, 'number')
    t.ok((line.ms as number) >= 0, `${name}: a duration`)
  }
})

t.test('a request id that looks like a key is not echoed into the log', async (t) => {
  const r = await s.fetch('/healthz', { headers: { 'x-request-id': key } })
  t.not(r.headers.get('x-request-id'), key)
  await lineFor(r.headers.get('x-request-id')!)
})

t.test('no key, query string or lead content in any log line', async (t) => {
  const all = logLines.join('')
  t.ok(issuedKeys.length > 0)
  for (const k of issuedKeys) {
    t.notOk(all.includes(k), 'no key')
    t.notOk(all.includes(k.split('_')[2]), 'no secret')
  }
  for (const v of Object.values(lead)) t.notOk(all.includes(v), `no lead content: ${v}`)
  t.notOk(all.includes('token='), 'no raw URL')
})

type Sample = { name: string; labels: Record<string, string>; value: number }

function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (!line) continue
    const typed = /^# TYPE (\S+) (counter|gauge|histogram)$/.exec(line)
    if (typed) types.set(typed[1], typed[2])
    if (line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) })
  }
  return { samples, types }
}

async function scrape(t: Tap) {
  const r = await fetch(`${s.metricsUrl}/metrics`)
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  return parseExposition(await r.text())
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))?.value

t.test('GET /metrics on its own listener', async (t) => {
  t.ok(s.metricsUrl, 'the listener is up')
  t.not(new URL(s.metricsUrl!).port, String(s.port), 'apart from the API')
  const api = await s.fetch('/metrics')
  t.equal(api.status, 404, 'not on the API listener')
  await api.arrayBuffer()

  const before = (await scrape(t)).samples
  const served = value(before, 'studio_http_requests_total', { route: '/api/v1/me', status: '200' }) ?? 0
  for (let i = 0; i < 3; i++)
    await (await s.fetch('/api/v1/me', { key, headers: { 'x-request-id': `ops-metrics-${i}` } })).arrayBuffer()
  await lineFor('ops-metrics-2')
  s.metrics.upstream('ok', 0.3)
  s.metrics.upstream('timeout', 120)
  s.metrics.spend('claude-sonnet-4-5', prefix, 15036)
  s.metrics.spend('claude-sonnet-4-5', prefix, 1000)
  s.metrics.refused('rate_limited')
  s.metrics.refused('quota_exceeded')
  s.metrics.refused('quota_exceeded')

  const { samples, types } = await scrape(t)
  t.equal(value(samples, 'studio_http_requests_total', { route: '/api/v1/me', status: '200' }), served + 3)
  t.ok(value(samples, 'studio_http_requests_total', { route: '/api/v1/leads', status: '201' })! >= 1)
  t.ok(value(samples, 'studio_http_requests_total', { route: 'unmatched', status: '404' })! >= 1)
  t.notOk(
    samples.some((x) => x.labels.route?.includes('nope')),
    'routes are patterns, not raw paths'
  )

  const buckets = samples.filter(
    (x) => x.name === 'studio_http_request_duration_seconds_bucket' && x.labels.route === '/api/v1/me'
  )
  t.equal(buckets.at(-1)!.labels.le, '+Inf')
  t.same(
    buckets.map((b) => b.value),
    [...buckets.map((b) => b.value)].sort((a, b) => a - b),
    'cumulative buckets'
  )
  t.equal(buckets.at(-1)!.value, value(samples, 'studio_http_request_duration_seconds_count', { route: '/api/v1/me' }))
  t.ok(value(samples, 'studio_http_request_duration_seconds_sum', { route: '/api/v1/me' })! > 0)

  t.equal(value(samples, 'studio_upstream_requests_total', { outcome: 'ok' }), 1)
  t.equal(value(samples, 'studio_upstream_requests_total', { outcome: 'timeout' }), 1)
  t.equal(value(samples, 'studio_upstream_duration_seconds_count'), 2)
  t.equal(value(samples, 'studio_upstream_duration_seconds_sum'), 120.3)
  t.equal(value(samples, 'studio_upstream_duration_seconds_bucket', { le: '1' }), 1)
  t.equal(value(samples, 'studio_refused_total', { reason: 'rate_limited' }), 1)
  t.equal(value(samples, 'studio_refused_total', { reason: 'quota_exceeded' }), 2)
  t.equal(value(samples, 'studio_spend_micro_usd_total', { model: 'claude-sonnet-4-5', key_prefix: prefix }), 16036)

  t.equal(value(samples, 'studio_http_requests_in_flight'), 0)
  t.equal(value(samples, 'studio_db_pool_max_connections'), s.db.mode === 'external' ? 20 : 4)
  for (const name of [
    'process_resident_memory_bytes',
    'nodejs_heap_size_used_bytes',
    'nodejs_heap_size_total_bytes',
    'process_start_time_seconds',
  ]) {
    t.ok(value(samples, name)! > 0, name)
  }
  t.same(Object.fromEntries([...types].filter(([n]) => n.startsWith('studio_'))), {
    studio_http_requests_total: 'counter',
    studio_http_request_duration_seconds: 'histogram',
    studio_http_requests_in_flight: 'gauge',
    studio_upstream_requests_total: 'counter',
    studio_upstream_duration_seconds: 'histogram',
    studio_upstream_attempts_total: 'counter',
    studio_upstream_failures_total: 'counter',
    studio_upstream_cooling: 'gauge',
    studio_refused_total: 'counter',
    studio_spend_micro_usd_total: 'counter',
    studio_db_pool_max_connections: 'gauge',
    studio_webhook_attempts_total: 'counter',
    studio_webhook_deliveries_waiting: 'gauge',
    studio_webhook_oldest_waiting_seconds: 'gauge',
  })
})

t.test('the metrics listener answers other paths and methods with the Error body', async (t) => {
  const nf = await fetch(`${s.metricsUrl}/`)
  t.equal(nf.status, 404)
  t.match(await nf.json(), { error: { code: 'not_found' } })
  const na = await fetch(`${s.metricsUrl}/metrics`, { method: 'POST' })
  t.equal(na.status, 405)
  t.equal(na.headers.get('allow'), 'GET, HEAD')
  t.match(await na.json(), { error: { code: 'method_not_allowed' } })
})

t.test('no metrics listener unless STUDIO_METRICS_PORT is set', async (t) => {
  const other = await startTestServer(t, {}, { dbEnv: s.dbEnv })
  t.equal(other.metricsUrl, undefined)
})

t.test('the registry: label escaping and a bound on label combinations', async (t) => {
  const m = createMetrics()
  m.upstream('say "hi"\\\n', 1)
  t.match(m.render(), 'studio_upstream_requests_total{outcome="say \\"hi\\"\\\\\\n"} 1')
  for (let i = 0; i < 1100; i++) m.upstream(`o${i}`, 1)
  const { samples } = parseExposition(m.render())
  const outcomes = samples.filter((x) => x.name === 'studio_upstream_requests_total')
  t.equal(outcomes.length, 1001, 'at most 1000 label values, then "other"')
  t.equal(value(samples, 'studio_upstream_requests_total', { outcome: 'other' }), 101)
})

t.test('studio healthcheck asks GET /healthz of the server at HOST:PORT', async (t) => {
  const { run } = await import('../../src/cli/cli.js')
  const { healthUrl } = await import('../../src/ops/healthcheck.js')
  const err: string[] = []
  const io = { out: () => {}, err: (l: string) => err.push(l) }
  t.equal(await run(['healthcheck'], { HOST: '127.0.0.1', PORT: String(s.port) }, io), 0)
  t.same(err, [])
  const closed = await startTestServer(t, {}, { dbEnv: s.dbEnv })
  await closed.close()
  t.equal(await run(['healthcheck'], { HOST: '127.0.0.1', PORT: String(closed.port) }, io), 1, 'nothing listening: 1')
  t.match(err[0], /^studio: unhealthy: http:\/\/127\.0\.0\.1:\d+\/healthz/)
  t.equal(healthUrl({ HOST: '0.0.0.0', PORT: 8080 }), 'http://127.0.0.1:8080/healthz')
  t.equal(healthUrl({ HOST: '::', PORT: 8080 }), 'http://[::1]:8080/healthz')
  t.equal(healthUrl({ HOST: '10.0.0.5', PORT: 80 }), 'http://10.0.0.5:80/healthz')
})
