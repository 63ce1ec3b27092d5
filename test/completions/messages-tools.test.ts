import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import { jsonSchemaOutputFormat } from '@anthropic-ai/sdk/helpers/json-schema'
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

// POST /api/v1/messages through the official `@anthropic-ai/sdk` with what goes beyond text: tool uses and their
// results, parallel tool uses streamed, images and structured output, to an Anthropic upstream (passed through) and
// to an OpenAI-compatible one (translated).

const dbEnv = await testDatabase(t)
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Say hello' }]
const serve = (t: Teardown, upstream: string) => sdkUpstreams(t, dbEnv, upstream)
const client = (s: TestServer, apiKey: string) => new Anthropic({ baseURL: `${s.url}/api`, apiKey, maxRetries: 0 })

const tools: Anthropic.Tool[] = [
  { name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
]
const weather = [{ id: 'call_1', name: 'weather', pieces: ['{"city":"Paris"}'] }]
const text = (s: string) => ({ type: 'text', text: s })
const openaiText = (content: string) =>
  openaiCompletion({ choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] })

// The first answer's tool use, its result sent back, and the final answer: what the SDK's caller does.
async function roundTrip(sdk: Anthropic) {
  const first = await sdk.messages.create({ model: 'fast', max_tokens: 50, messages: hello, tools })
  const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock
  const messages: Anthropic.MessageParam[] = [
    ...hello,
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '22°C' }] },
  ]
  const second = await sdk.messages.create({ model: 'fast', max_tokens: 50, tools, messages })
  return { first, use, messages, second }
}

t.test('a tool use to an OpenAI-compatible upstream, its result sent back, and the final answer', async (t) => {
  const { s, openai } = await serve(t, 'openai')
  openai.next(json(200, openaiToolCalls(weather)), json(200, openaiText('Sunny')))
  const { first, use, second } = await roundTrip(client(s, await s.key()))
  t.equal(first.stop_reason, 'tool_use')
  t.same([use.id, use.name, use.input, use.caller], ['call_1', 'weather', { city: 'Paris' }, { type: 'direct' }])
  t.same(second.content, [{ ...text('Sunny'), citations: null }])
  t.same(openai.seen[1].body.messages.slice(1), [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '22°C' },
  ])
  t.same(openai.seen[1].body.tools, [
    { type: 'function', function: { name: 'weather', parameters: tools[0].input_schema } },
  ])
})

t.test('a tool use to an Anthropic upstream: every message passes through as sent', async (t) => {
  // With an OpenAI-compatible upstream later in the list, the messages must translate too: Anthropic's own answer
  // (a tool use's `caller: {type: "direct"}`) sent back included.
  const { s, anthropic } = await serve(t, 'anthropic,openai')
  anthropic.next(json(200, anthropicToolUse(weather)), json(200, anthropicMessage({ content: [text('Sunny')] })))
  const { first, use, messages, second } = await roundTrip(client(s, await s.key()))
  t.equal(first.stop_reason, 'tool_use')
  t.same([use.id, use.name, use.input], ['call_1', 'weather', { city: 'Paris' }])
  t.same(second.content, [text('Sunny')])
  t.same(anthropic.seen[1].body.messages, messages)
  t.same(anthropic.seen[1].body.tools, tools)
})

t.test('two parallel tool uses streamed, input split mid-token, from each upstream', async (t) => {
  for (const [upstream, body] of [
    ['openai', openaiToolStream()],
    ['anthropic', anthropicToolStream()],
  ] as const) {
    const { s, openai, anthropic } = await serve(t, upstream)
    ;(upstream === 'openai' ? openai : anthropic).next(sse(body, { sizes: [5, 11, 3] }))
    const stream = client(s, await s.key()).messages.stream({ model: 'fast', max_tokens: 50, messages: hello, tools })
    const fragments: string[] = []
    stream.on('inputJson', (partial) => fragments.push(partial))
    const done = await stream.finalMessage()
    t.same(
      done.content.map((b) => (b.type === 'tool_use' ? [b.id, b.name, b.input, b.caller?.type] : b.type)),
      [
        ['call_a', 'weather', { city: 'Paris' }, upstream === 'openai' ? 'direct' : undefined],
        ['call_b', 'time', { zone: 'CET' }, upstream === 'openai' ? 'direct' : undefined],
      ],
      upstream
    )
    t.same(fragments, ['{"ci', 'ty": "Pa', 'ris"}', '{"zo', 'ne": "CET"}'], `${upstream}: the pieces as they came`)
    t.equal(done.stop_reason, 'tool_use', upstream)
  }
})

t.test('an image as base64 data and as an https URL reaches each upstream in its own terms', async (t) => {
  const data = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
  const messages: Anthropic.MessageParam[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      ],
    },
  ]
  const { s, openai, anthropic } = await serve(t, 'openai,anthropic')
  openai.next(json(200, openaiText('A dot and a cat')), json(503, { error: { message: 'down' } }))
  const sdk = client(s, await s.key())
  const seen = await sdk.messages.create({ model: 'fast', max_tokens: 50, messages })
  t.same(seen.content, [{ ...text('A dot and a cat'), citations: null }])
  t.same(openai.seen[0].body.messages[0].content, [
    { type: 'text', text: 'What is in these?' },
    { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } },
    { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
  ])
  await sdk.messages.create({ model: 'fast', max_tokens: 50, messages })
  t.same(anthropic.seen[0].body.messages, messages, 'after a fallback, the Anthropic upstream gets them as sent')
})

t.test("the SDK's structured output from each upstream, the schema in its own terms", async (t) => {
  const format = jsonSchemaOutputFormat({
    type: 'object',
    properties: { city: { type: 'string' }, celsius: { type: 'number' } },
    required: ['city', 'celsius'],
  })
  const answer = '{"city":"Paris","celsius":22}'
  for (const upstream of ['openai', 'anthropic']) {
    const { s, openai, anthropic } = await serve(t, upstream)
    if (upstream === 'openai') openai.next(json(200, openaiText(answer)))
    else anthropic.next(json(200, anthropicMessage({ content: [text(answer)] })))
    const done = await client(s, await s.key()).messages.parse({
      model: 'fast',
      max_tokens: 50,
      messages: hello,
      output_config: { format },
    })
    t.same(done.parsed_output, { city: 'Paris', celsius: 22 }, upstream)
    const schema = { ...format.schema }
    t.equal(schema.additionalProperties, false, 'the SDK made the schema strict')
    if (upstream === 'openai')
      t.same(openai.seen[0].body.response_format, {
        type: 'json_schema',
        json_schema: { name: 'output', schema, strict: true },
      })
    else t.same(anthropic.seen[0].body.output_config, { format: { type: 'json_schema', schema } })
  }
})
