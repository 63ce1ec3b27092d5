import t from 'tap'
import { InvalidRequestError, ServerError, Studio } from '../../clients/typescript/src/index.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { anthropicStream, fakeUpstream, json, sse } from '../support/fake-upstream.js'
import { startTestServer } from '../support/server.js'

// The TypeScript client's streamed completions against the live server over an upstream that streams.

const TEXTS = ['Hé, wörld 👋', ' and ∑ more']
const hello = { messages: [{ role: 'user' as const, content: 'Hi' }] }
const body = anthropicStream(TEXTS)
const cut = Buffer.from(body).indexOf('event: content_block_stop')
const anthropic = await fakeUpstream(t, sse(body))
const s = await startTestServer(
  t,
  { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: anthropic.url, STUDIO_UPSTREAM_TIMEOUT_MS: '5000' },
  { dbEnv: await testDatabase(t), pingMs: 20 }
)
const baseURL = `${s.url}/api/v1`
const client = new Studio({ apiKey: await s.key(), baseURL })

const deferred = () => {
  let open = () => {}
  const promise = new Promise<void>((ok) => {
    open = ok
  })
  return { promise, open }
}

t.beforeEach(() => anthropic.reset())

t.test('deltas in order, then done: finalCompletion() is what create() answers', async (t) => {
  const stream = client.completions.stream(hello)
  const events = []
  for await (const e of stream) events.push(e)
  t.same(
    events.map((e) => e.type),
    ['delta', 'delta', 'delta', 'delta', 'done']
  )
  t.same(
    events.flatMap((e) => (e.type === 'delta' ? [e.data.text] : [])),
    ['Hé, wö', 'rld 👋', ' and ∑', ' more']
  )
  const final = await stream.finalCompletion()
  t.match(final, { content: TEXTS.join(''), stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 5 } })
  t.same(events.at(-1)!.data, final)
  t.equal((await stream.response()).headers.get('content-type'), 'text/event-stream')
  t.equal(anthropic.seen[0].body.stream, true)
  const alone = await client.completions.stream(hello).finalCompletion()
  t.same(alone, final, 'finalCompletion() reads the stream itself when no loop does')
})

t.test('ping comments are skipped', async (t) => {
  const go = deferred()
  anthropic.next(sse(body, { after: cut, pause: () => go.promise }))
  let raw = ''
  const watching: typeof fetch = async (input, init) => {
    const r = await fetch(input, init)
    const [mine, theirs] = r.body!.tee()
    void (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of theirs) {
        raw += decoder.decode(chunk, { stream: true })
        if (raw.includes(': ping')) go.open()
      }
    })()
    return new Response(mine, r)
  }
  const c = new Studio({ apiKey: await s.key(), baseURL, fetch: watching })
  const types = []
  for await (const e of c.completions.stream(hello)) types.push(e.type)
  t.match(raw, /\n: ping\n/, 'the server pinged')
  t.same(types, ['delta', 'delta', 'delta', 'delta', 'done'])
})

t.test('breaking out of the loop closes the connection', async (t) => {
  const go = deferred()
  anthropic.next(sse(body, { after: cut, pause: () => go.promise }))
  const key = await s.key()
  const c = new Studio({ apiKey: key, baseURL })
  const stream = c.completions.stream(hello)
  for await (const e of stream) {
    t.equal(e.type, 'delta')
    break
  }
  await eventually(() => anthropic.seen[0]?.aborted, { what: 'the upstream socket closed' })
  go.open()
  const prefix = key.split('_')[1]
  const recorded = () => s.db.sql`select outcome from completions where key_prefix = ${prefix}`
  const [row] = await eventually(async () => (await recorded()).length && recorded(), { what: 'the call recorded' })
  t.equal(row.outcome, 'client_closed')
  await t.rejects(stream.finalCompletion(), { message: /closed before its last event/ })
})

t.test('an error event: the loop and finalCompletion() reject with a ServerError', async (t) => {
  anthropic.next(sse(body, { after: cut, die: true }))
  const stream = client.completions.stream(hello)
  const texts: string[] = []
  const failed = await (async () => {
    for await (const e of stream) if (e.type === 'delta') texts.push(e.data.text)
  })().catch((e) => e)
  t.type(failed, ServerError)
  t.match(failed, { code: 'upstream_error', message: 'The upstream stream broke off', requestId: /\S/ })
  t.same(texts, ['Hé, wö', 'rld 👋'])
  await t.rejects(stream.finalCompletion(), ServerError)
})

t.test('before the first event: the ordinary typed errors, and retries', async (t) => {
  await t.rejects(client.completions.stream({ ...hello, max_tokens: 0 }).finalCompletion(), InvalidRequestError)
  const busy = json(
    503,
    { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
    { 'retry-after': '0' }
  )
  anthropic.next(busy, busy, busy)
  let calls = 0
  const counting: typeof fetch = (input, init) => {
    calls++
    return fetch(input, init)
  }
  const c = new Studio({ apiKey: await s.key(), baseURL, fetch: counting })
  t.equal((await c.completions.stream(hello).finalCompletion()).content, TEXTS.join(''))
  t.equal(calls, 2, 'the 503 was retried')
  anthropic.next(sse(body, { after: cut, die: true }))
  calls = 0
  await t.rejects(c.completions.stream(hello).finalCompletion(), { code: 'upstream_error' })
  t.equal(calls, 1, 'never retried after the first event')
})
