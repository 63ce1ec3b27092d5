import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import { anthropicStream, json, openaiCompletion, openaiStream, sse } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import type { TestServer } from '../support/server.js'
import { sdkUpstreams, streamFailure, used } from '../support/sdk-upstreams.js'
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

// An OpenAI stream of two parallel tool calls, each one's arguments split mid-token.
function twoToolCalls() {
  const head = { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-x' }
  const chunk = (delta: unknown, finish: string | null = null, usage: unknown = null) =>
    `data: ${JSON.stringify({ ...head, choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], usage })}\n\n`
  const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ({
    tool_calls: [
      { index, ...(id ? { id, type: 'function' } : {}), function: { ...(name ? { name } : {}), arguments: args } },
    ],
  })
  return (
    chunk({ role: 'assistant', content: null }) +
    chunk(call(0, 'call_a', 'weather', '')) +
    chunk(call(0, undefined, undefined, '{"ci')) +
    chunk(call(0, undefined, undefined, 'ty": "Paris"}')) +
    chunk(call(1, 'call_b', 'time', '{"zo')) +
    chunk(call(1, undefined, undefined, 'ne": "CET"}')) +
    chunk({}, 'tool_calls') +
    chunk(null, null, { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 }) +
    'data: [DONE]\n\n'
  )
}

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

  t.test('a tool call to an OpenAI-compatible upstream, its result sent back, and the final answer', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    const tools: Anthropic.Tool[] = [
      { name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ]
    const toolCall = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }
    openai.next(
      json(
        200,
        openaiCompletion({
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: null, tool_calls: [toolCall] },
              finish_reason: 'tool_calls',
            },
          ],
        })
      ),
      json(
        200,
        openaiCompletion({
          choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny' }, finish_reason: 'stop' }],
        })
      )
    )
    const sdk = client(s, await s.key())
    const first = await sdk.messages.create({ model: 'fast', max_tokens: 50, messages: hello, tools })
    t.equal(first.stop_reason, 'tool_use')
    const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock
    t.same(use.input, { city: 'Paris' })
    const second = await sdk.messages.create({
      model: 'fast',
      max_tokens: 50,
      tools,
      messages: [
        ...hello,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '22°C' }] },
      ],
    })
    t.same(second.content, [{ type: 'text', text: 'Sunny', citations: null }])
    t.same(openai.seen[1].body.messages.at(-1), { role: 'tool', tool_call_id: 'call_1', content: '22°C' })
  })

  t.test('two parallel tool calls streamed from an OpenAI-compatible upstream', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    openai.next(sse(twoToolCalls(), { sizes: [5, 11, 3] }))
    const done = await client(s, await s.key())
      .messages.stream({ model: 'fast', max_tokens: 50, messages: hello })
      .finalMessage()
    t.same(
      done.content.map((b) => (b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type)),
      [
        ['call_a', 'weather', { city: 'Paris' }],
        ['call_b', 'time', { zone: 'CET' }],
      ]
    )
    t.equal(done.stop_reason, 'tool_use')
  })
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
