import t from 'tap'
import OpenAI from 'openai'
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

// POST /api/v1/chat/completions driven by the official `openai` SDK, against fake upstreams of both protocols: the
// same protocol passed through, the other translated, whole and streamed, and the errors as the SDK raises them.

const dbEnv = await testDatabase(t)
const hello: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }]

const serve = (t: Teardown, upstream: string, env: Record<string, string> = {}) => sdkUpstreams(t, dbEnv, upstream, env)

const client = (s: TestServer, apiKey: string, maxRetries = 0) =>
  new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey, maxRetries })

const event = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

t.test('happy', async (t) => {
  t.test(
    'a whole answer from an OpenAI-compatible upstream passes through, the model as the caller named it',
    async (t) => {
      const { s, openai } = await serve(t, 'openai')
      const key = await s.key()
      const answer = await client(s, key).chat.completions.create({ model: 'fast', messages: hello, max_tokens: 50 })
      t.equal(answer.choices[0].message.content, 'Hi there')
      t.equal(answer.model, 'fast')
      t.equal(answer.usage?.prompt_tokens, 20)
      t.equal(openai.seen[0].body.model, 'gpt-4.1-mini')
      t.same(openai.seen[0].body.messages, hello)
      await eventually(async () => t.equal(await used(s, key), 1))
    }
  )

  t.test('a whole answer from an Anthropic upstream is translated, usage and cached tokens included', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const answer = await client(s, await s.key()).chat.completions.create({ model: 'primary', messages: hello })
    t.equal(answer.choices[0].message.content, 'Hello')
    t.equal(answer.choices[0].finish_reason, 'stop')
    t.equal(answer.model, 'primary')
    t.equal(answer.usage?.prompt_tokens, 15)
    t.equal(answer.usage?.prompt_tokens_details?.cached_tokens, 3)
    t.equal(anthropic.seen[0].body.model, 'claude-sonnet-4-5')
    t.same(anthropic.seen[0].body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }])
  })

  t.test('a streamed answer from each upstream, with the usage chunk asked for', async (t) => {
    for (const [upstream, body, text, prompt, cached] of [
      ['openai', openaiStream(['Hi', ' there']), 'Hi there', 20, 8],
      ['anthropic', anthropicStream(['Hello', ', world']), 'Hello, world', 15, 3],
    ] as const) {
      const { s, openai, anthropic } = await serve(t, upstream)
      ;(upstream === 'openai' ? openai : anthropic).next(sse(body))
      const key = await s.key()
      const stream = await client(s, key).chat.completions.create({
        model: 'fast',
        messages: hello,
        stream: true,
        stream_options: { include_usage: true },
      })
      let content = ''
      let usage: OpenAI.CompletionUsage | null | undefined
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? ''
        if (chunk.usage) usage = chunk.usage
        t.equal(chunk.model, 'fast')
      }
      t.equal(content, text, upstream)
      t.equal(usage?.prompt_tokens, prompt, upstream)
      t.equal(usage?.prompt_tokens_details?.cached_tokens, cached, upstream)
      await eventually(async () => t.equal(await used(s, key), 1))
    }
  })

  t.test(
    'with the same protocol, an unknown member reaches the upstream and the answer is as it sent it',
    async (t) => {
      const { s, openai } = await serve(t, 'openai')
      const sent = openaiCompletion({ system_fingerprint: 'fp_1', brand_new: { level: 2 } })
      openai.next(json(200, sent))
      const request = { model: 'fast', messages: hello, max_tokens: 50, brand_new_option: { level: 2 } }
      const raw = await client(s, await s.key())
        .chat.completions.create(request as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .asResponse()
      t.same(await raw.json(), { ...sent, model: 'fast' })
      t.same(openai.seen[0].body, { ...request, model: 'gpt-4.1-mini' })
    }
  )

  t.test('with the same protocol, a stream comes back chunk for chunk but for the model', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    const body = openaiStream(['Hi', ' there'])
    openai.next(sse(body))
    const stream = await client(s, await s.key()).chat.completions.create({
      model: 'fast',
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    })
    const chunks: unknown[] = []
    for await (const chunk of stream) chunks.push(chunk)
    const sent = [...body.matchAll(/^data: (\{.*)\r$/gm)].map((m) => ({ ...JSON.parse(m[1]), model: 'fast' }))
    t.same(chunks, sent)
  })

  t.test('cache writes are counted in prompt_tokens and named apart, whole and streamed', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const usage = { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 }
    const streamed = anthropicStream(['Hi']).replace(
      '"cache_creation_input_tokens":0',
      '"cache_creation_input_tokens":4'
    )
    anthropic.next(json(200, anthropicMessage({ usage })), sse(streamed))
    const sdk = client(s, await s.key())
    const expected = {
      prompt_tokens: 19,
      completion_tokens: 5,
      total_tokens: 24,
      prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 4 },
    }
    const whole = await sdk.chat.completions.create({ model: 'fast', messages: hello })
    t.same(whole.usage, expected)
    const stream = await sdk.chat.completions.create({
      model: 'fast',
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    })
    let last: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of stream) last = chunk.usage ?? last
    t.same(last, expected)
  })

  t.test('a call naming no max_tokens reaches the upstream with the native default, 1024', async (t) => {
    for (const upstream of ['openai', 'anthropic']) {
      const { s, openai, anthropic } = await serve(t, upstream)
      const fake = upstream === 'openai' ? openai : anthropic
      fake.next(json(200, upstream === 'openai' ? openaiCompletion() : anthropicMessage()))
      await client(s, await s.key()).chat.completions.create({ model: 'fast', messages: hello })
      t.equal(fake.seen[0].body.max_tokens, 1024, upstream)
    }
  })

  t.test('a stream without include_usage gets no usage chunk, though the upstream was asked for one', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    openai.next(sse(openaiStream(['Hi'])))
    const stream = await client(s, await s.key()).chat.completions.create({
      model: 'fast',
      messages: hello,
      stream: true,
    })
    const chunks: OpenAI.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)
    t.notOk(chunks.some((c) => c.usage))
    t.same(openai.seen[0].body.stream_options, { include_usage: true })
  })
})

t.test('fallback from an overloaded Anthropic upstream to an OpenAI-compatible one, whole and streamed', async (t) => {
  const { s, anthropic, openai } = await serve(t, 'anthropic,openai')
  const overloaded = json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
  anthropic.next(overloaded, overloaded)
  openai.next(json(200, openaiCompletion()), sse(openaiStream(['Hi', ' again'])))
  const key = await s.key()
  const sdk = client(s, key)
  const whole = await sdk.chat.completions.create({ model: 'fast', messages: hello, top_p: 0.5 })
  t.equal(whole.choices[0].message.content, 'Hi there')
  t.equal(whole.model, 'fast')
  const stream = await sdk.chat.completions.create({ model: 'fast', messages: hello, stream: true })
  let content = ''
  for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? ''
  t.equal(content, 'Hi again')
  t.same(
    openai.seen.map((r) => [r.body.model, r.body.top_p]),
    [
      ['gpt-4.1-mini', 0.5],
      ['gpt-4.1-mini', undefined],
    ]
  )
  t.equal(anthropic.seen[0].body.top_p, 0.5)
  await eventually(async () => t.equal(await used(s, key), 2))
})

t.test('errors', async (t) => {
  t.test('a member Anthropic cannot express is refused, before any upstream call', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const key = await s.key()
    const e = await client(s, key)
      .chat.completions.create({ model: 'fast', messages: hello, logprobs: true })
      .catch((e) => e)
    t.ok(e instanceof OpenAI.BadRequestError)
    t.equal(e.param, 'logprobs')
    t.match(e.message, /logprobs/)
    t.equal(anthropic.seen.length, 0)
    t.equal(await used(s, key), 0)
  })

  t.test('more than one answer, or more than 4096 tokens, is refused: one quota unit bounds a call', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    const key = await s.key()
    for (const [member, extra] of [
      ['n', { n: 2 }],
      ['max_tokens', { max_tokens: 5000 }],
      ['max_completion_tokens', { max_completion_tokens: 5000 }],
    ] as const) {
      const e = await client(s, key)
        .chat.completions.create({ model: 'fast', messages: hello, ...extra })
        .catch((e) => e)
      t.ok(e instanceof OpenAI.BadRequestError, member)
      t.match(e.message, new RegExp(`^400 ${member}: `), member)
    }
    t.equal(openai.seen.length, 0)
    t.equal(await used(s, key), 0)
  })

  t.test('an alias nobody configured is 404 model_not_found', async (t) => {
    const { s } = await serve(t, 'openai')
    const e = await client(s, await s.key())
      .chat.completions.create({ model: 'gpt-5', messages: hello })
      .catch((e) => e)
    t.ok(e instanceof OpenAI.NotFoundError)
    t.equal(e.code, 'model_not_found')
  })

  t.test(
    "the key's rate limit is a 429 the SDK retries after its retry-after, then the call goes through",
    async (t) => {
      const clock = movableClock()
      const { s, openai } = await sdkUpstreams(t, dbEnv, 'openai', {}, { clock: clock.now })
      const key = await s.key({ email: `rate-${Date.now()}@example.com`, limits: { rateLimit: 1 } })
      const answers: string[] = []
      const sdk = new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: key, maxRetries: 1, fetch: notingFetch(answers) })
      const first = clock.now()
      await sdk.chat.completions.create({ model: 'fast', messages: hello })
      clock.set(first + RATE_WINDOW_ALMOST_OVER_MS)
      const answer = await sdk.chat.completions.create({ model: 'fast', messages: hello })
      t.equal(answer.choices[0].message.content, 'Hi there')
      t.same(answers, ['200', '429 retry-after', '200'])
      t.equal(openai.seen.length, 2)
    }
  )

  t.test('the quota spent is a 429 the SDK does not retry', async (t) => {
    const { s, openai } = await serve(t, 'openai', { STUDIO_QUOTA_FREE: '1' })
    const sdk = client(s, await s.key(), 2)
    await sdk.chat.completions.create({ model: 'fast', messages: hello })
    const e = await sdk.chat.completions.create({ model: 'fast', messages: hello }).catch((e) => e)
    t.ok(e instanceof OpenAI.RateLimitError)
    t.equal(e.type, 'insufficient_quota')
    t.equal(e.error.code, 'quota_exceeded')
    t.equal(openai.seen.length, 1)
  })

  t.test('a stream that fails midway ends with the error the SDK raises', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const broken = anthropicStream(['Hello']).split('event: message_delta')[0]
    anthropic.next(sse(`${broken}${event('error', { error: { type: 'invalid_request_error', message: 'boom' } })}`))
    const stream = await client(s, await s.key()).chat.completions.create({
      model: 'fast',
      messages: hello,
      stream: true,
    })
    const e = await streamFailure(stream)
    t.ok(e instanceof OpenAI.APIError)
    t.match(e.message, /boom/)
  })
})

t.test('security', async (t) => {
  t.test('no key, or a wrong one, is the SDK AuthenticationError', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    const e = await client(s, 'sk_wrong')
      .chat.completions.create({ model: 'fast', messages: hello })
      .catch((e) => e)
    t.ok(e instanceof OpenAI.AuthenticationError)
    t.equal(e.error.code, 'unauthorized')
    t.equal(openai.seen.length, 0)
  })

  t.test('a key without completions:write is PermissionDenied', async (t) => {
    const { s } = await serve(t, 'openai')
    const key = await s.key({ email: 'leads@example.com', scopes: ['leads:write'] } as any)
    const e = await client(s, key)
      .chat.completions.create({ model: 'fast', messages: hello })
      .catch((e) => e)
    t.ok(e instanceof OpenAI.PermissionDeniedError)
  })
})
