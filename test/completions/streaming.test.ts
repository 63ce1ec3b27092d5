import t from 'tap'
import {
  anthropicMessage,
  anthropicStream,
  fakeUpstream,
  json,
  openaiCompletion,
  openaiStream,
  sse,
} from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { startTestServer, type TestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'

// Streamed completions (`stream: true`) against fake upstreams speaking each protocol's streaming format, written in
// pieces that split lines, CRLFs and characters: the events, what is recorded, and the quota unit.

const dbEnv = await testDatabase(t)
const hello = { messages: [{ role: 'user', content: 'Say hello' }] }
const TEXTS = ['Hé, wörld 👋', ' and ∑ more']

interface Sse {
  event: string
  data: any
}

// The events of a stream as the client reads them; `stop` ends the reading early when it says so.
async function readEvents(res: Response, stop?: (e: Sse) => boolean, comments: string[] = []): Promise<Sse[]> {
  const events: Sse[] = []
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return events
    text += decoder.decode(value, { stream: true })
    let end = text.indexOf('\n\n')
    while (end !== -1) {
      const block = text.slice(0, end)
      text = text.slice(end + 2)
      end = text.indexOf('\n\n')
      if (block.startsWith(':')) {
        comments.push(block)
        continue
      }
      const [event, data] = block.split('\n')
      const e = { event: event.slice('event: '.length), data: JSON.parse(data.slice('data: '.length)) }
      events.push(e)
      if (stop?.(e)) {
        await reader.cancel()
        return events
      }
    }
  }
}

const deferred = () => {
  let open = () => {}
  const promise = new Promise<void>((ok) => {
    open = ok
  })
  return { promise, open }
}

async function rows(s: TestServer, key: string, n = 1) {
  const prefix = key.split('_')[1]
  return eventually(
    async () => {
      const r = await s.db.sql`select * from completions where key_prefix = ${prefix} order by id`
      return r.length >= n && r
    },
    { what: `${n} completion(s) recorded` }
  )
}

const used = async (s: TestServer, key: string) =>
  ((await (await s.fetch('/api/v1/me', { key })).json()) as any).quota.used as number

const deltas = (events: Sse[]) => events.filter((e) => e.event === 'delta').map((e) => e.data.text)

const anthropic = await fakeUpstream(t, sse(anthropicStream(TEXTS)))
const s = await startTestServer(
  t,
  { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: anthropic.url, STUDIO_UPSTREAM_TIMEOUT_MS: '5000' },
  { dbEnv, pingMs: 20 }
)
const stream = (key: string, body: object = hello) =>
  s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { ...body, stream: true } })

t.beforeEach(() => anthropic.reset())

t.test('anthropic: deltas in order, then done: what the non-streaming call answers', async (t) => {
  const key = await s.key()
  const res = await stream(key)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'text/event-stream')
  t.equal(res.headers.get('cache-control'), 'no-cache')
  t.equal(res.headers.get('x-accel-buffering'), 'no')
  t.match(res.headers.get('server-timing'), /^upstream;dur=\d+(\.\d+)?, total;dur=\d+(\.\d+)?$/)
  t.ok(res.headers.get('x-request-id'))
  const events = await readEvents(res)
  t.same(deltas(events), ['Hé, wö', 'rld 👋', ' and ∑', ' more'], 'each piece whole, in order')
  t.same(
    events.map((e) => e.event),
    ['delta', 'delta', 'delta', 'delta', 'done'],
    'no ping, no other event; done once, last'
  )
  t.same(anthropic.seen[0].body, {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    messages: hello.messages,
    stream: true,
  })

  const content = TEXTS.map((text) => ({ type: 'text', text }))
  anthropic.next(json(200, anthropicMessage({ content })))
  const whole = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  t.same(events.at(-1)!.data, await whole.json(), 'done equals the non-streaming answer')
  const [row] = await rows(s, key, 2)
  t.match(row, { outcome: 'ok', input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 3, usage_missing: false })
  t.equal(await used(s, key), 2)
})

t.test('`stream: false` is the non-streaming call', async (t) => {
  anthropic.next(json(200, anthropicMessage()))
  const r = await s.fetch('/api/v1/ai/completions', {
    method: 'POST',
    key: await s.key(),
    json: { ...hello, stream: false },
  })
  t.equal(r.headers.get('content-type'), 'application/json')
  t.equal(((await r.json()) as any).content, 'Hello, world')
  t.notOk('stream' in anthropic.seen[0].body)
})

t.test('no usage from the upstream: done says 0, the record says it was missing', async (t) => {
  anthropic.next(sse(anthropicStream(TEXTS, false)))
  const key = await s.key()
  const events = await readEvents(await stream(key))
  t.same(events.at(-1)!.data.usage, {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  })
  const [row] = await rows(s, key)
  t.match(row, { outcome: 'ok', input_tokens: 0, output_tokens: 0, usage_missing: true })
})

t.test('an upstream slow to start: no 200 until its first event', async (t) => {
  const gate = deferred()
  anthropic.next(sse(anthropicStream(TEXTS), { gate: gate.promise }))
  let answered = false
  const pending = stream(await s.key()).then((r) => {
    answered = true
    return r
  })
  await eventually(() => anthropic.seen.length === 1, { what: 'the upstream called' })
  // A round trip through the service after the upstream's headers went out: the stream's headers would be there.
  await s.fetch('/api/v1/me', { key: await s.key() })
  t.notOk(answered, 'no answer before the first event')
  gate.open()
  const res = await pending
  t.equal(res.status, 200)
  t.equal((await readEvents(res)).at(-1)!.event, 'done')
})

t.test('an upstream dying mid-stream: error last; the unit is spent after a delta', async (t) => {
  const cut = Buffer.from(anthropicStream(TEXTS)).indexOf('event: content_block_stop')
  anthropic.next(sse(anthropicStream(TEXTS), { after: cut, die: true }))
  const key = await s.key()
  const events = await readEvents(await stream(key))
  t.same(deltas(events), ['Hé, wö', 'rld 👋'])
  t.same(events.at(-1), {
    event: 'error',
    data: { error: { code: 'upstream_error', message: 'The upstream stream broke off' } },
  })
  const [row] = await rows(s, key)
  t.match(row, { outcome: 'upstream_unreachable', input_tokens: 12, output_tokens: 1 })
  t.equal(await used(s, key), 1, 'the text went out: the unit is spent')
})

t.test('a stream failing before its first delta gives its unit back', async (t) => {
  const key = await s.key()
  const cut = Buffer.from(anthropicStream(TEXTS)).indexOf('event: content_block_start')
  anthropic.next(sse(anthropicStream(TEXTS), { after: cut, die: true }))
  const events = await readEvents(await stream(key))
  t.same(
    events.map((e) => e.event),
    ['error'],
    'after the first event: a 200, then the error'
  )
  anthropic.next(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))
  anthropic.next(json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'no' } }))
  const before = await stream(key)
  t.equal(before.status, 422, 'before the first event: an ordinary JSON error')
  t.equal(((await before.json()) as any).error.code, 'invalid_request')
  await rows(s, key, 2)
  t.equal(await eventually(async () => (await used(s, key)) === 0 && 'none'), 'none', 'no unit spent')
})

t.test('an overloaded error as the first event of a stream is another attempt, as a 529 would be', async (t) => {
  const key = await s.key()
  const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }
  anthropic.next(sse(`event: error\ndata: ${JSON.stringify(overloaded)}\n\n`))
  const res = await stream(key)
  t.equal(res.status, 200)
  const events = await readEvents(res)
  t.same(deltas(events).join(''), TEXTS.join(''), 'the second attempt streamed')
  t.equal(anthropic.seen.length, 2, 'two attempts upstream')
  t.equal(await eventually(async () => (await used(s, key)) === 1 && 'one'), 'one', 'one unit')
})

t.test('a client going away mid-stream: the upstream socket closes, the record says client_closed', async (t) => {
  const go = deferred()
  const cut = Buffer.from(anthropicStream(TEXTS)).indexOf('event: content_block_stop')
  anthropic.next(sse(anthropicStream(TEXTS), { after: cut, pause: () => go.promise }))
  const key = await s.key()
  // Aborted, not just cancelled: the response recorder reads a clone of the body, which would keep the connection.
  const abort = new AbortController()
  const res = await s.fetch('/api/v1/ai/completions', {
    method: 'POST',
    key,
    json: { ...hello, stream: true },
    signal: abort.signal,
  })
  const first = (e: Sse) => {
    if (e.event === 'delta') abort.abort()
    return e.event === 'delta'
  }
  const events = await readEvents(res, first).catch(() => [])
  t.equal(events.length, 1)
  await eventually(() => anthropic.seen[0]?.aborted, { what: 'the upstream socket closed' })
  go.open()
  const [row] = await rows(s, key)
  t.match(row, { outcome: 'client_closed', input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 3 })
  t.equal(await used(s, key), 1)
})

t.test('a ping comment while the upstream is silent; the upstream ping is not forwarded', async (t) => {
  const go = deferred()
  const cut = Buffer.from(anthropicStream(TEXTS)).indexOf('event: content_block_stop')
  const comments: string[] = []
  anthropic.next(sse(anthropicStream(TEXTS), { after: cut, pause: () => go.promise }))
  const res = await stream(await s.key())
  const reading = readEvents(res, undefined, comments)
  await eventually(() => comments.length > 0, { what: 'a ping' })
  go.open()
  const events = await reading
  t.equal(comments[0], ': ping')
  t.equal(events.at(-1)!.event, 'done')
  t.notOk(events.some((e) => e.event === 'ping'))
})

t.test('openai-compatible: include_usage asked; CRLF; done equals the non-streaming answer', async (t) => {
  const pieces = ['Hi ', 'thé', 're 👋']
  const openai = await fakeUpstream(t, sse(openaiStream(pieces), { sizes: [5, 1, 1, 17] }))
  const o = await startTestServer(t, { STUDIO_UPSTREAM: 'openai', OPENAI_BASE_URL: `${openai.url}/v1` }, { dbEnv })
  const key = await o.key()
  const res = await o.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { ...hello, stream: true } })
  t.equal(res.status, 200)
  const events = await readEvents(res)
  t.same(deltas(events), pieces)
  t.match(openai.seen[0].body, { stream: true, stream_options: { include_usage: true } })
  const message = { role: 'assistant', content: pieces.join('') }
  openai.next(json(200, openaiCompletion({ choices: [{ index: 0, message, finish_reason: 'length' }] })))
  const whole = await o.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  t.same(events.at(-1)!.data, await whole.json())
  t.match((await rows(o, key))[0], {
    outcome: 'ok',
    input_tokens: 12,
    cache_read_input_tokens: 8,
    usage_missing: false,
  })

  openai.next(sse(openaiStream(pieces, false)))
  const bare = await readEvents(
    await o.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { ...hello, stream: true } })
  )
  t.equal(bare.at(-1)!.data.usage.input_tokens, 0)
  t.match((await rows(o, key, 3))[2], { outcome: 'ok', usage_missing: true })
})
