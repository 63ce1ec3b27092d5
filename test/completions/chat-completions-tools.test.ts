import t from 'tap'
import OpenAI from 'openai'
import {
  anthropicMessage,
  anthropicToolStream,
  anthropicToolUse,
  json,
  openaiCompletion,
  openaiToolCalls,
  openaiToolStream,
  sse,
} from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import type { TestServer } from '../support/server.js'
import { sdkUpstreams } from '../support/sdk-upstreams.js'
import type { Teardown } from '../support/teardown.js'

// POST /api/v1/chat/completions through the official `openai` SDK with what goes beyond text: tool calls and their
// results, parallel tool calls streamed, images and JSON output, to an OpenAI-compatible upstream (passed through)
// and to an Anthropic one (translated).

const dbEnv = await testDatabase(t)
const hello: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }]
const serve = (t: Teardown, upstream: string) => sdkUpstreams(t, dbEnv, upstream)
const client = (s: TestServer, apiKey: string) => new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey, maxRetries: 0 })

const parameters = { type: 'object', properties: { city: { type: 'string' } } }
const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'weather', parameters } }]
const weather = [{ id: 'call_1', name: 'weather', pieces: ['{"city":"Paris"}'] }]

// The first answer's tool call, its result sent back, and the final answer: what the SDK's caller does.
async function roundTrip(sdk: OpenAI, model: string) {
  const first = await sdk.chat.completions.create({ model, messages: hello, tools })
  const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    ...hello,
    first.choices[0].message,
    { role: 'tool', tool_call_id: call.id, content: '22°C, sunny' },
  ]
  const second = await sdk.chat.completions.create({ model, messages, tools })
  return { first, call, messages, second }
}

t.test('a tool call to an Anthropic upstream, its result sent back, and the final answer', async (t) => {
  const { s, anthropic } = await serve(t, 'anthropic')
  anthropic.next(
    json(200, anthropicToolUse(weather)),
    json(200, anthropicMessage({ content: [{ type: 'text', text: 'Sunny in Paris' }] }))
  )
  const { first, call, second } = await roundTrip(client(s, await s.key()), 'primary')
  t.equal(first.choices[0].finish_reason, 'tool_calls')
  t.same([call.id, call.function.name, JSON.parse(call.function.arguments)], ['call_1', 'weather', { city: 'Paris' }])
  t.equal(second.choices[0].message.content, 'Sunny in Paris')
  const sent = anthropic.seen[1].body
  t.same(sent.messages.slice(1), [
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '22°C, sunny' }] },
  ])
  t.same(sent.tools, [{ name: 'weather', input_schema: parameters }])
})

t.test('a tool call to an OpenAI-compatible upstream: every message passes through as sent', async (t) => {
  // With an Anthropic upstream later in the list, the messages must translate too: OpenAI's own answer
  // (`refusal: null`, `annotations: []`) sent back included.
  const { s, openai } = await serve(t, 'openai,anthropic')
  openai.next(
    json(200, openaiToolCalls(weather)),
    json(
      200,
      openaiCompletion({
        choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny in Paris' }, finish_reason: 'stop' }],
      })
    )
  )
  const { first, call, messages, second } = await roundTrip(client(s, await s.key()), 'primary')
  t.equal(first.choices[0].finish_reason, 'tool_calls')
  t.same([call.id, call.function.name, JSON.parse(call.function.arguments)], ['call_1', 'weather', { city: 'Paris' }])
  t.equal(second.choices[0].message.content, 'Sunny in Paris')
  t.same(openai.seen[1].body.messages, messages)
  t.same(openai.seen[1].body.tools, tools)
})

t.test('two parallel tool calls streamed, arguments split mid-token, from each upstream', async (t) => {
  for (const [upstream, body] of [
    ['anthropic', anthropicToolStream()],
    ['openai', openaiToolStream()],
  ] as const) {
    const { s, openai, anthropic } = await serve(t, upstream)
    ;(upstream === 'openai' ? openai : anthropic).next(sse(body, { sizes: [5, 11, 3] }))
    const stream = client(s, await s.key()).chat.completions.stream({ model: 'fast', messages: hello, tools })
    const fragments: string[] = []
    stream.on('tool_calls.function.arguments.delta', (e) => e.arguments_delta && fragments.push(e.arguments_delta))
    const done = await stream.finalChatCompletion()
    const calls = done.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]
    t.same(
      calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['call_a', 'weather', { city: 'Paris' }],
        ['call_b', 'time', { zone: 'CET' }],
      ],
      upstream
    )
    t.same(fragments, ['{"ci', 'ty": "Pa', 'ris"}', '{"zo', 'ne": "CET"}'], `${upstream}: the pieces as they came`)
    t.equal(done.choices[0].finish_reason, 'tool_calls', upstream)
  }
})

t.test('an image as base64 data and as an https URL reaches each upstream in its own terms', async (t) => {
  const data = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      ],
    },
  ]
  const { s, openai, anthropic } = await serve(t, 'anthropic,openai')
  const overloaded = json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
  anthropic.next(json(200, anthropicMessage({ content: [{ type: 'text', text: 'A dot and a cat' }] })), overloaded)
  const sdk = client(s, await s.key())
  const seen = await sdk.chat.completions.create({ model: 'fast', messages })
  t.equal(seen.choices[0].message.content, 'A dot and a cat')
  t.same(anthropic.seen[0].body.messages[0].content, [
    { type: 'text', text: 'What is in these?' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
  ])
  await sdk.chat.completions.create({ model: 'fast', messages })
  t.same(openai.seen[0].body.messages, messages, 'after a fallback, the OpenAI-compatible upstream gets them as sent')
})

t.test('a json_schema answer from each upstream, the schema in its own terms', async (t) => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, celsius: { type: 'number' } },
    required: ['city', 'celsius'],
    additionalProperties: false,
  }
  const response_format = {
    type: 'json_schema' as const,
    json_schema: { name: 'weather', schema, strict: true },
  }
  const answer = '{"city":"Paris","celsius":22}'
  for (const upstream of ['anthropic', 'openai']) {
    const { s, openai, anthropic } = await serve(t, upstream)
    if (upstream === 'anthropic')
      anthropic.next(json(200, anthropicMessage({ content: [{ type: 'text', text: answer }] })))
    else
      openai.next(
        json(
          200,
          openaiCompletion({
            choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
          })
        )
      )
    const done = await client(s, await s.key()).chat.completions.create({
      model: 'fast',
      messages: hello,
      response_format,
    })
    t.same(JSON.parse(done.choices[0].message.content!), { city: 'Paris', celsius: 22 }, upstream)
    if (upstream === 'anthropic')
      t.same(anthropic.seen[0].body.output_config, { format: { type: 'json_schema', schema } })
    else t.same(openai.seen[0].body.response_format, response_format)
  }
})
