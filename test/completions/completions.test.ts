import t from 'tap'
import {
  anthropicMessage,
  fakeUpstream,
  garbage,
  hang,
  json,
  openaiCompletion,
  reset,
} from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { logLines, startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'
import { refusedPort } from '../support/ports.js'

const UPSTREAM_KEY = 'sk-ant-test-secret-0123456789'
const dbEnv = await testDatabase(t)
const backoffs: (number | null)[] = []
const backoff = (_attempt: number, retryAfter: number | null) => {
  backoffs.push(retryAfter)
  return 5
}

const anthropic = await fakeUpstream(t, json(200, anthropicMessage(), { 'request-id': 'req_abc' }))
const s = await startTestServer(
  t,
  { ANTHROPIC_API_KEY: UPSTREAM_KEY, ANTHROPIC_BASE_URL: anthropic.url, STUDIO_UPSTREAM_TIMEOUT_MS: '1500' },
  { dbEnv, backoff }
)
const key = await s.key({ email: 'ai@example.com', plan: 'ENTERPRISE' })
const sql = s.db.sql
const hello = { messages: [{ role: 'user', content: 'Say hello' }] }
const complete = (body: unknown, init: RequestInit = {}) =>
  s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: body, ...init })

async function recorded(outcome: string, where: (row: Record<string, any>) => boolean = () => true) {
  const found = async () => {
    const rows = (await sql`select * from completions where outcome = ${outcome} order by id`).filter(where)
    return rows.length > 0 && rows
  }
  return eventually(found, { what: `a completion recorded with outcome ${outcome}` })
}

t.beforeEach(() => {
  anthropic.reset()
  backoffs.length = 0
})

t.test('anthropic: what is sent and what the caller gets', async (t) => {
  const r = await complete(hello)
  t.equal(r.status, 200)
  t.same(await r.json(), {
    model: 'claude-sonnet-4-5-20250929',
    content: 'Hello, world',
    stop_reason: 'end_turn',
    usage: { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 0 },
    cost_usd: '0.000112',
  })
  t.match(r.headers.get('server-timing'), /^upstream;dur=\d+(\.\d+)?, total;dur=\d+(\.\d+)?$/)
  t.equal(anthropic.seen.length, 1)
  const [call] = anthropic.seen
  t.equal(call.method, 'POST')
  t.equal(call.path, '/v1/messages')
  t.equal(call.headers['x-api-key'], UPSTREAM_KEY)
  t.equal(call.headers['anthropic-version'], '2023-06-01')
  t.match(call.headers['content-type'], /^application\/json/)
  t.same(
    call.body,
    { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: hello.messages },
    'defaults; no temperature, no system'
  )
  const [row] = await recorded('ok')
  t.match(row, {
    key_prefix: key.split('_')[1],
    model_alias: 'primary',
    upstream_model: 'claude-sonnet-4-5',
    input_tokens: 12,
    output_tokens: 5,
    cache_read_input_tokens: 3,
    cache_creation_input_tokens: 0,
    attempts: 1,
    upstream_request_id: 'req_abc',
  })
  t.type(row.latency_ms, 'number')
})

t.test('anthropic: system, temperature, model and max_tokens are passed through', async (t) => {
  const body = {
    messages: [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
    ],
    system: 'Be brief.',
    temperature: 0,
    max_tokens: 4096,
    model: 'fast',
  }
  const r = await complete(body)
  t.equal(r.status, 200)
  t.same(anthropic.seen[0].body, {
    model: 'claude-haiku-4-5',
    max_tokens: 4096,
    messages: body.messages,
    system: 'Be brief.',
    temperature: 0,
  })
})

t.test('anthropic: usage absent → zeros, stop_reason null', async (t) => {
  anthropic.next(json(200, anthropicMessage({ usage: undefined, stop_reason: null })))
  const r = await complete(hello)
  const b = (await r.json()) as any
  t.same(b.usage, { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
  t.equal(b.stop_reason, null)
})

t.test('upstream 400 → 422 invalid_request with the upstream message', async (t) => {
  anthropic.next(json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } }))
  const r = await complete(hello)
  t.equal(r.status, 422)
  const e = ((await r.json()) as any).error
  t.equal(e.code, 'invalid_request')
  t.match(e.message, 'prompt is too long')
  t.same(e.details.issues, [{ path: '', message: 'prompt is too long' }])
  t.equal(anthropic.seen.length, 1, 'not retried')
})

t.test('upstream 401/403 → 502 upstream_error, logged loudly, key never echoed', async (t) => {
  for (const status of [401, 403]) {
    anthropic.reset()
    anthropic.next(
      json(status, {
        type: 'error',
        error: { type: 'authentication_error', message: `invalid x-api-key ${UPSTREAM_KEY}` },
      })
    )
    const r = await complete(hello)
    t.equal(r.status, 502)
    const text = await r.text()
    t.equal(JSON.parse(text).error.code, 'upstream_error')
    t.notMatch(text, UPSTREAM_KEY)
    t.equal(anthropic.seen.length, 1, 'not retried')
  }
  t.ok(s.log.lines.some((l) => /"level":"error".*refused our credentials/.test(l)))
  t.notOk(
    logLines.some((l) => l.includes(UPSTREAM_KEY)),
    'the upstream key is in no log line'
  )
})

t.test('429/529/5xx are retried at most twice', async (t) => {
  anthropic.next(
    json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    json(500, {})
  )
  const ok = await complete(hello)
  t.equal(ok.status, 200, 'third attempt succeeds')
  t.equal(anthropic.seen.length, 3)
  const [row] = await recorded('ok', (r) => r.attempts === 3)
  t.ok(row, 'recorded with 3 attempts')

  anthropic.reset()
  anthropic.next(json(503, {}), json(502, {}), json(500, {}), json(200, anthropicMessage()))
  const r = await complete(hello)
  t.equal(r.status, 503)
  t.equal(((await r.json()) as any).error.code, 'upstream_unavailable')
  t.match(r.headers.get('retry-after'), /^\d+$/)
  t.equal(anthropic.seen.length, 3, 'exactly 1 + 2 retries')
})

t.test('retry-after is honoured, capped', async (t) => {
  anthropic.next(
    json(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '2' })
  )
  anthropic.next(
    json(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '3600' })
  )
  anthropic.next(
    json(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '7' })
  )
  const r = await complete(hello)
  t.equal(r.status, 503)
  t.same(backoffs, [2, 3600], 'the backoff sees the retry-after values')
  t.equal(r.headers.get('retry-after'), '7')
  const { jitteredBackoff } = await import('../../src/completions/retries.js')
  t.ok(jitteredBackoff(0, 3600) <= 10_100, 'a huge retry-after is capped')
  t.ok(jitteredBackoff(0, 2) >= 2000, 'a small one is honoured')
})

t.test('a 429 that says a spend limit was reached is not retried', async (t) => {
  anthropic.next(
    json(429, { type: 'error', error: { type: 'billing_error', message: 'You have reached your spend limit' } })
  )
  const r = await complete(hello)
  t.equal(r.status, 503)
  t.equal(((await r.json()) as any).error.code, 'upstream_unavailable')
  t.equal(anthropic.seen.length, 1)
})

t.test(
  "an exhausted credit balance (400 or 402) is the operator's problem: 503, not retried, not blamed on the caller",
  async (t) => {
    anthropic.next(
      json(400, {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'Your credit balance is too low to access the Anthropic API.',
        },
      })
    )
    const r = await complete(hello)
    t.equal(r.status, 503)
    t.equal(((await r.json()) as any).error.code, 'upstream_unavailable')
    anthropic.next(json(402, { type: 'error', error: { type: 'billing_error', message: 'payment required' } }))
    const r2 = await complete(hello)
    t.equal(r2.status, 503)
    t.equal(anthropic.seen.length, 2, 'neither was retried')
  }
)

t.test('a connection reset once the upstream had the request is not sent again: 502', async (t) => {
  anthropic.next(reset)
  const r = await complete(hello)
  t.equal(r.status, 502)
  t.equal(((await r.json()) as any).error.code, 'upstream_error')
  t.equal(anthropic.seen.length, 1, 'one call: the upstream may have answered and billed it')
  t.same(backoffs, [], 'no retry waited for')
  const [row] = await recorded('upstream_broke_off')
  t.match(row, { attempts: 1, upstream: 'anthropic', tries: [{ outcome: 'upstream_broke_off' }] })
})

t.test('a refused connection never reached the upstream: retried, then 503', async (t) => {
  const down = await startTestServer(
    t,
    { ANTHROPIC_API_KEY: UPSTREAM_KEY, ANTHROPIC_BASE_URL: `http://127.0.0.1:${await refusedPort()}` },
    { dbEnv, backoff }
  )
  const refusedKey = await down.key({ plan: 'ENTERPRISE' })
  const r = await down.fetch('/api/v1/ai/completions', { method: 'POST', key: refusedKey, json: hello })
  t.equal(r.status, 503)
  t.equal(((await r.json()) as any).error.code, 'upstream_unavailable')
  t.same(backoffs, [null, null], 'two retries')
  const [row] = await recorded('upstream_unreachable', (row) => row.key_prefix === refusedKey.split('_')[1])
  t.match(row, { attempts: 3, tries: [{ outcome: 'upstream_unreachable' }, {}, {}] })
})

t.test('garbage from the upstream → 502 upstream_error', async (t) => {
  anthropic.next(garbage)
  const r = await complete(hello)
  t.equal(r.status, 502)
  t.equal(((await r.json()) as any).error.code, 'upstream_error')
  anthropic.next(json(200, { hello: 'world' }))
  t.equal((await complete(hello)).status, 502)
  anthropic.next(json(404, { type: 'error', error: { type: 'not_found_error', message: 'model: nope' } }))
  t.equal((await complete(hello)).status, 502)
})

t.test('no answer in time → 504 upstream_timeout', async (t) => {
  anthropic.next(hang)
  const r = await complete(hello)
  t.equal(r.status, 504)
  t.equal(((await r.json()) as any).error.code, 'upstream_timeout')
  t.equal(anthropic.seen.length, 1)
  await anthropic.settled()
  t.equal(anthropic.seen[0].aborted, true, 'the upstream call was abandoned')
})

t.test('a client that disconnects aborts its upstream call', async (t) => {
  anthropic.next(hang)
  const ac = new AbortController()
  const pending = complete(hello, { signal: ac.signal }).catch((e) => e)
  await eventually(() => anthropic.seen.length > 0, { what: 'the call at the upstream' })
  t.equal(anthropic.seen.length, 1)
  ac.abort()
  await pending
  await anthropic.settled()
  t.equal(anthropic.seen[0].aborted, true)
  const [row] = await recorded('client_closed')
  t.equal(row.attempts, 1)
})

const invalid: [string, unknown, string][] = [
  ['messages missing', {}, 'messages'],
  ['messages empty', { messages: [] }, 'messages'],
  ['messages not an array', { messages: 'hi' }, 'messages'],
  ['role system', { messages: [{ role: 'system', content: 'x' }] }, 'messages.0.role'],
  ['role missing', { messages: [{ content: 'x' }] }, 'messages.0.role'],
  ['content missing', { messages: [{ role: 'user' }] }, 'messages.0.content'],
  [
    'content not a string',
    { messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] },
    'messages.0.content',
  ],
  ['content empty', { messages: [{ role: 'user', content: '' }] }, 'messages.0.content'],
  ['unknown message field', { messages: [{ role: 'user', content: 'x', name: 'bob' }] }, 'messages.0.name'],
  ['model unknown', { ...hello, model: 'gpt-4' }, 'model'],
  ['max_tokens 0', { ...hello, max_tokens: 0 }, 'max_tokens'],
  ['max_tokens 4097', { ...hello, max_tokens: 4097 }, 'max_tokens'],
  ['max_tokens fractional', { ...hello, max_tokens: 1.5 }, 'max_tokens'],
  ['max_tokens a string', { ...hello, max_tokens: '10' }, 'max_tokens'],
  ['max_tokens 1e309', '{"messages":[{"role":"user","content":"x"}],"max_tokens":1e309}', 'max_tokens'],
  ['temperature below 0', { ...hello, temperature: -0.1 }, 'temperature'],
  ['temperature above 1', { ...hello, temperature: 1.1 }, 'temperature'],
  ['temperature a string', { ...hello, temperature: '0.5' }, 'temperature'],
  ['system not a string', { ...hello, system: ['x'] }, 'system'],
  ['unknown field', { ...hello, top_p: 1 }, 'top_p'],
  ['stream not a boolean', { ...hello, stream: 'yes' }, 'stream'],
]
t.test('422 rules: the upstream sees no call', async (t) => {
  for (const [name, body, path] of invalid) {
    const r =
      typeof body === 'string'
        ? await s.fetch('/api/v1/ai/completions', {
            method: 'POST',
            key,
            body,
            headers: { 'content-type': 'application/json' },
          })
        : await complete(body)
    t.equal(r.status, 422, name)
    const e = ((await r.json()) as any).error
    t.equal(e.code, 'invalid_request', name)
    t.ok(
      e.details.issues.some((i: any) => i.path === path),
      `${name}: ${JSON.stringify(e.details.issues)}`
    )
  }
  t.equal(anthropic.seen.length, 0)
})

t.test('not configured → 503 ai_not_configured naming the variable; everything else works', async (t) => {
  const bare = await startTestServer(t, {}, { dbEnv })
  const k = await bare.key()
  const r = await bare.fetch('/api/v1/ai/completions', { method: 'POST', key: k, json: hello })
  t.equal(r.status, 503)
  const e = ((await r.json()) as any).error
  t.equal(e.code, 'ai_not_configured')
  t.equal(
    e.message,
    'AI completions are not configured: set ANTHROPIC_API_KEY, or STUDIO_UPSTREAM=openai with OPENAI_BASE_URL ' +
      '(any OpenAI-compatible server), or STUDIO_UPSTREAM=echo to try the API without a provider'
  )
  t.equal((await bare.fetch('/api/v1/me', { key: k })).status, 200)
  const o = await startTestServer(t, { STUDIO_UPSTREAM: 'openai' }, { dbEnv })
  const r2 = await o.fetch('/api/v1/ai/completions', { method: 'POST', key: await o.key(), json: hello })
  t.match(
    ((await r2.json()) as any).error.message,
    /STUDIO_UPSTREAM=openai needs OPENAI_BASE_URL .*STUDIO_UPSTREAM=echo/
  )
})

t.test('openai-compatible upstream', async (t) => {
  const oa = await fakeUpstream(t, json(200, openaiCompletion(), { 'x-request-id': 'oa-1' }))
  const o = await startTestServer(
    t,
    {
      STUDIO_UPSTREAM: 'openai',
      OPENAI_BASE_URL: `${oa.url}/v1`,
      OPENAI_API_KEY: 'sk-local',
      STUDIO_MODEL_PRIMARY: 'llama3.2:3b',
    },
    { dbEnv, backoff }
  )
  const k = await o.key()
  const r = await o.fetch('/api/v1/ai/completions', { method: 'POST', key: k, json: { ...hello, system: 'Be brief.' } })
  t.equal(r.status, 200)
  t.same(await r.json(), {
    model: 'llama3.2:3b',
    content: 'Hi there',
    stop_reason: 'max_tokens',
    usage: { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 8, cache_creation_input_tokens: 0 },
    cost_usd: null,
  })
  const [call] = oa.seen
  t.equal(call.path, '/v1/chat/completions')
  t.equal(call.headers.authorization, 'Bearer sk-local')
  t.same(call.body, {
    model: 'llama3.2:3b',
    messages: [{ role: 'system', content: 'Be brief.' }, ...hello.messages],
    max_tokens: 1024,
  })

  oa.reset()
  oa.next(
    json(
      200,
      openaiCompletion({
        choices: [{ message: { content: 'x' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1 },
      })
    )
  )
  const r2 = await o.fetch('/api/v1/ai/completions', {
    method: 'POST',
    key: k,
    json: { ...hello, temperature: 0.7, model: 'fast' },
  })
  const b2 = (await r2.json()) as any
  t.equal(b2.stop_reason, 'end_turn')
  t.same(b2.usage, { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
  t.same(oa.seen[0].body, { model: 'gpt-4.1-mini', messages: hello.messages, max_tokens: 1024, temperature: 0.7 })

  oa.reset()
  oa.next(
    json(429, {
      error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' },
    })
  )
  const r3 = await o.fetch('/api/v1/ai/completions', { method: 'POST', key: k, json: hello })
  t.equal(r3.status, 503)
  t.equal(oa.seen.length, 1, 'a spend limit is not retried')

  oa.reset()
  oa.next(json(400, { error: { message: 'bad model', type: 'invalid_request_error' } }))
  const r4 = await o.fetch('/api/v1/ai/completions', { method: 'POST', key: k, json: hello })
  t.equal(r4.status, 422)
  t.match(((await r4.json()) as any).error.message, 'bad model')
})

t.test('a local server without a key gets no authorization header', async (t) => {
  const oa = await fakeUpstream(t, json(200, openaiCompletion()))
  const o = await startTestServer(t, { STUDIO_UPSTREAM: 'openai', OPENAI_BASE_URL: `${oa.url}/v1` }, { dbEnv })
  const r = await o.fetch('/api/v1/ai/completions', { method: 'POST', key: await o.key(), json: hello })
  t.equal(r.status, 200)
  t.equal(oa.seen[0].headers.authorization, undefined)
  t.equal(oa.seen[0].body.model, 'gpt-4.1')
})
