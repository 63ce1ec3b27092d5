import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import {
  anthropicMessage,
  anthropicStream,
  json,
  openaiCompletion,
  openaiStream,
  sse,
} from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import type { TestServer } from '../support/server.js'
import {
  movableClock,
  notingFetch,
  RATE_WINDOW_ALMOST_OVER_MS,
  sdkUpstreams,
  streamFailure,
  used,
} from '../support/sdk-upstreams.js'
import type { Teardown } from '../support/teardown.js'

// POST /api/v1/messages driven by the official `@anthropic-ai/sdk`, against fake upstreams of both protocols: the
// same protocol passed through, the other translated, whole and streamed, and the errors as the SDK raises them.

const dbEnv = await testDatabase(t)
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Say hello' }]
// top_k left the current SDK's types; older SDKs send it and the API takes it.
const withTopK = { model: 'fast', max_tokens: 50, messages: hello, top_k: 5 }
const overloaded = json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })

const serve = (t: Teardown, upstream: string, env: Record<string, string> = {}) => sdkUpstreams(t, dbEnv, upstream, env)

const client = (s: TestServer, apiKey: string, maxRetries = 0) =>
  new Anthropic({ baseURL: `${s.url}/api`, apiKey, maxRetries })

t.test('happy', async (t) => {
  t.test('a whole answer from an Anthropic upstream passes through, with x-api-key', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const key = await s.key()
    const sdk = new Anthropic({
      baseURL: `${s.url}/api`,
      apiKey: null,
      authToken: null,
      maxRetries: 0,
      defaultHeaders: { 'x-api-key': key },
    })
    const answer = await sdk.messages.create(withTopK)
    t.same(answer.content, [{ type: 'text', text: 'Hello' }])
    t.equal(answer.model, 'fast')
    t.equal(answer.usage.cache_read_input_tokens, 3)
    t.equal(anthropic.seen[0].body.model, 'claude-haiku-4-5')
    t.equal(anthropic.seen[0].body.top_k, 5)
    await eventually(async () => t.equal(await used(s, key), 1))
  })

  t.test('a whole answer from an OpenAI-compatible upstream is translated', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    const answer = await client(s, await s.key()).messages.create({ model: 'primary', max_tokens: 50, messages: hello })
    t.same(answer.content, [{ type: 'text', text: 'Hi there', citations: null }])
    t.equal(answer.stop_reason, 'max_tokens')
    t.equal(answer.model, 'primary')
    t.equal(answer.usage.cache_read_input_tokens, 8)
    t.equal(openai.seen[0].body.model, 'gpt-4.1')
  })

  t.test('a streamed answer from each upstream', async (t) => {
    for (const [upstream, body, text] of [
      ['anthropic', anthropicStream(['Hello', ', world']), 'Hello, world'],
      ['openai', openaiStream(['Hi', ' there']), 'Hi there'],
    ] as const) {
      const { s, openai, anthropic } = await serve(t, upstream)
      ;(upstream === 'openai' ? openai : anthropic).next(sse(body))
      const key = await s.key()
      const stream = client(s, key).messages.stream({ model: 'fast', max_tokens: 50, messages: hello })
      const types: string[] = []
      stream.on('streamEvent', (e) => types.push(e.type))
      const done = await stream.finalMessage()
      const texts = done.content.filter((b) => b.type === 'text').map((b) => (b as Anthropic.TextBlock).text)
      t.equal(texts.join(''), text, upstream)
      t.equal(done.model, 'fast')
      t.ok(done.usage.output_tokens > 0)
      t.equal(types[0], 'message_start')
      t.equal(types.at(-1), 'message_stop')
      await eventually(async () => t.equal(await used(s, key), 1))
    }
  })

  t.test(
    'with the same protocol, an unknown member reaches the upstream and the answer is as it sent it',
    async (t) => {
      const { s, anthropic } = await serve(t, 'anthropic')
      const sent = anthropicMessage({ content: [{ type: 'text', text: 'Hello' }], brand_new: { level: 2 } })
      anthropic.next(json(200, sent))
      const request = { model: 'fast', max_tokens: 50, messages: hello, brand_new_option: { level: 2 } }
      const raw = await client(s, await s.key())
        .messages.create(request as Anthropic.MessageCreateParamsNonStreaming)
        .asResponse()
      t.same(await raw.json(), { ...sent, model: 'fast' })
      t.same(anthropic.seen[0].body, { ...request, model: 'claude-haiku-4-5' })
    }
  )

  t.test('with the same protocol, a stream comes back event for event but for the model', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const body = anthropicStream(['Hello', ', world'])
    anthropic.next(sse(body))
    const stream = await client(s, await s.key()).messages.create({
      model: 'fast',
      max_tokens: 50,
      messages: hello,
      stream: true,
    })
    const events: any[] = []
    for await (const e of stream) events.push(e)
    const sent = [...body.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1])).filter((e) => e.type !== 'ping')
    sent[0].message.model = 'fast'
    t.same(events, sent)
  })

  t.test('usage and cached tokens, whole and streamed, from each upstream', async (t) => {
    const cached = { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 }
    const openaiUsage = {
      prompt_tokens: 20,
      completion_tokens: 7,
      total_tokens: 27,
      prompt_tokens_details: { cached_tokens: 8 },
    }
    const fromOpenAI = {
      input_tokens: 12,
      output_tokens: 7,
      cache_read_input_tokens: 8,
      cache_creation_input_tokens: 0,
    }
    for (const [upstream, whole, streamed, expected] of [
      [
        'anthropic',
        anthropicMessage({ usage: cached }),
        anthropicStream(['Hi']).replace('"cache_creation_input_tokens":0', '"cache_creation_input_tokens":4'),
        cached,
      ],
      ['openai', openaiCompletion({ usage: openaiUsage }), openaiStream(['Hi']), fromOpenAI],
    ] as const) {
      const { s, openai, anthropic } = await serve(t, upstream)
      ;(upstream === 'openai' ? openai : anthropic).next(json(200, whole), sse(streamed))
      const sdk = client(s, await s.key())
      const answer = await sdk.messages.create({ model: 'fast', max_tokens: 50, messages: hello })
      t.match(answer.usage, expected, `${upstream}, whole`)
      const done = await sdk.messages.stream({ model: 'fast', max_tokens: 50, messages: hello }).finalMessage()
      t.match(done.usage, expected, `${upstream}, streamed`)
    }
  })
})

t.test('fallback from an overloaded Anthropic upstream to an OpenAI-compatible one, whole and streamed', async (t) => {
  const { s, anthropic, openai } = await serve(t, 'anthropic,openai')
  anthropic.next(overloaded, overloaded)
  openai.next(json(200, openaiCompletion()), sse(openaiStream(['Hi', ' again'])))
  const key = await s.key()
  const sdk = client(s, key)
  const whole = await sdk.messages.create({ model: 'fast', max_tokens: 50, messages: hello, stop_sequences: ['###'] })
  t.same(whole.content, [{ type: 'text', text: 'Hi there', citations: null }])
  t.equal(whole.model, 'fast')
  const done = await sdk.messages.stream({ model: 'fast', max_tokens: 50, messages: hello }).finalMessage()
  t.match(done.content, [{ type: 'text', text: 'Hi again' }])
  t.equal(done.model, 'fast')
  t.same(
    anthropic.seen.map((r) => [r.body.model, r.body.stop_sequences]),
    [
      ['claude-haiku-4-5', ['###']],
      ['claude-haiku-4-5', undefined],
    ]
  )
  t.same(
    openai.seen.map((r) => [r.body.model, r.body.stop, r.body.messages]),
    [
      ['gpt-4.1-mini', ['###'], hello],
      ['gpt-4.1-mini', undefined, hello],
    ]
  )
  await eventually(async () => t.equal(await used(s, key), 2))
})

t.test('errors', async (t) => {
  t.test('a member OpenAI cannot express is refused before any upstream call', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    const e = await client(s, await s.key())
      .messages.create(withTopK)
      .catch((e) => e)
    t.ok(e instanceof Anthropic.BadRequestError)
    t.match(e.message, /top_k/)
    t.equal(openai.seen.length, 0)
  })

  t.test('more than 4096 max_tokens is refused: one quota unit bounds a call', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const key = await s.key()
    const e = await client(s, key)
      .messages.create({ model: 'fast', max_tokens: 5000, messages: hello })
      .catch((e) => e)
    t.ok(e instanceof Anthropic.BadRequestError)
    t.match(e.message, /max_tokens: must be at most 4096/)
    t.equal(anthropic.seen.length, 0)
    t.equal(await used(s, key), 0)
  })

  t.test('a stream that fails after message_start, before any content, gives the unit back', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const key = await s.key()
    const start = anthropicStream(['Hello']).split('event: content_block_start')[0]
    const failure = { type: 'error', error: { type: 'api_error', message: 'boom' } }
    anthropic.next(sse(`${start}event: error\ndata: ${JSON.stringify(failure)}\n\n`))
    const stream = await client(s, key).messages.create({
      model: 'fast',
      max_tokens: 50,
      messages: hello,
      stream: true,
    })
    const e = await streamFailure(stream)
    t.ok(e instanceof Anthropic.APIError)
    t.match(e.message, /boom/)
    t.equal(await used(s, key), 0)
  })

  t.test('every upstream overloaded is a 529 overloaded_error', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    anthropic.next(overloaded, overloaded, overloaded)
    const e = await client(s, await s.key())
      .messages.create({ model: 'fast', max_tokens: 50, messages: hello })
      .catch((e) => e)
    t.equal(e.status, 529)
    t.equal(e.error.error.type, 'overloaded_error')
  })

  t.test(
    "the key's rate limit is a 429 the SDK retries after its retry-after, then the call goes through",
    async (t) => {
      const clock = movableClock()
      const { s, anthropic } = await sdkUpstreams(t, dbEnv, 'anthropic', {}, { clock: clock.now })
      const key = await s.key({ email: `rate-${Date.now()}@example.com`, limits: { rateLimit: 1 } })
      const answers: string[] = []
      const sdk = new Anthropic({ baseURL: `${s.url}/api`, apiKey: key, maxRetries: 1, fetch: notingFetch(answers) })
      const first = clock.now()
      await sdk.messages.create({ model: 'fast', max_tokens: 5, messages: hello })
      clock.set(first + RATE_WINDOW_ALMOST_OVER_MS)
      const answer = await sdk.messages.create({ model: 'fast', max_tokens: 5, messages: hello })
      t.same(answer.content, [{ type: 'text', text: 'Hello' }])
      t.same(answers, ['200', '429 retry-after', '200'])
      t.equal(anthropic.seen.length, 2)
    }
  )

  t.test('an alias nobody configured is NotFound, a spent quota a RateLimit the SDK does not retry', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic', { STUDIO_QUOTA_FREE: '1' })
    const sdk = client(s, await s.key(), 2)
    const missing = await sdk.messages.create({ model: 'claude-x', max_tokens: 5, messages: hello }).catch((e) => e)
    t.ok(missing instanceof Anthropic.NotFoundError)
    await sdk.messages.create({ model: 'fast', max_tokens: 5, messages: hello })
    const spent = await sdk.messages.create({ model: 'fast', max_tokens: 5, messages: hello }).catch((e) => e)
    t.ok(spent instanceof Anthropic.RateLimitError)
    t.equal(spent.error.error.code, 'quota_exceeded')
    t.equal(anthropic.seen.length, 1)
  })
})

t.test('security', async (t) => {
  t.test('a wrong key, in either header, is the SDK AuthenticationError', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const e = await client(s, 'sk_wrong')
      .messages.create({ model: 'fast', max_tokens: 5, messages: hello })
      .catch((e) => e)
    t.ok(e instanceof Anthropic.AuthenticationError)
    t.equal(e.error.error.code, 'unauthorized')
    const res = await fetch(`${s.url}/api/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk_wrong', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'fast', max_tokens: 5, messages: hello }),
    })
    t.equal(res.status, 401)
    t.equal(anthropic.seen.length, 0)
  })

  t.test('x-api-key is not taken on the other routes', async (t) => {
    const { s } = await serve(t, 'anthropic')
    const key = await s.key()
    const res = await fetch(`${s.url}/api/v1/me`, { headers: { 'x-api-key': key } })
    t.equal(res.status, 401)
  })
})
