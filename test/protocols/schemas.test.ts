import t from 'tap'
import { readCountTokensRequest, readMessagesRequest } from '../../src/protocols/anthropic-schema.js'
import { readChatRequest } from '../../src/protocols/openai-schema.js'
import { json } from '../support/fake-upstream.js'
import { sdks } from './sdks.js'

// The request schemas take what the official SDKs send, every translated feature in it, and keep members they do not
// know, so that a provider's new feature survives a call to an upstream of the same protocol.

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const schema = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
}

t.test('happy: what the OpenAI SDK sends', async (t) => {
  const { server, openai } = await sdks(t)
  server.next(json(200, {}))
  await openai.chat.completions.create({
    model: 'fast',
    messages: [
      { role: 'developer', content: 'Be terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'auto' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '18 C' },
    ],
    max_completion_tokens: 100,
    temperature: 0.5,
    stop: 'END',
    tools: [{ type: 'function', function: { name: 'weather', parameters: schema, strict: true } }],
    tool_choice: { type: 'function', function: { name: 'weather' } },
    parallel_tool_calls: false,
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    safety_identifier: 'u-1',
  })
  const body = server.seen[0].body
  t.same(readChatRequest(body), body, 'valid, and kept whole')
})

t.test('happy: what the Anthropic SDK sends, count_tokens too', async (t) => {
  const { server, anthropic } = await sdks(t)
  server.next(json(200, {}), json(200, { input_tokens: 10 }))
  const params = {
    model: 'primary',
    system: [{ type: 'text' as const, text: 'Be terse.', cache_control: { type: 'ephemeral' as const } }],
    messages: [
      {
        role: 'user' as const,
        content: [
          { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG } },
          { type: 'text' as const, text: 'What is this?' },
        ],
      },
      {
        role: 'assistant' as const,
        content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }],
      },
      {
        role: 'user' as const,
        content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'no data', is_error: true }],
      },
    ],
    tools: [{ name: 'weather', input_schema: schema as { type: 'object' }, strict: true }],
    tool_choice: { type: 'tool' as const, name: 'weather', disable_parallel_tool_use: true },
    output_config: { format: { type: 'json_schema' as const, schema } },
  }
  await anthropic.messages.create({ ...params, max_tokens: 100, stop_sequences: ['END'], metadata: { user_id: 'u-1' } })
  await anthropic.messages.countTokens(params)
  const [create, count] = server.seen.map((s) => s.body)
  t.same(readMessagesRequest(create), create, 'valid, and kept whole')
  t.same(readCountTokensRequest(count), count, 'count_tokens: valid, and kept whole')
  t.equal(server.seen[1].path, '/v1/messages/count_tokens')
})

t.test('happy: members the schemas do not know are kept', async (t) => {
  const openai = {
    model: 'm',
    messages: [{ role: 'user', content: [{ type: 'input_video', video: { id: 'v' } }], mood: 'calm' }],
    a_new_feature: { on: true },
  }
  t.same(readChatRequest(openai), openai)
  const anthropic = {
    model: 'm',
    max_tokens: 5,
    messages: [{ role: 'user', content: [{ type: 'hologram', id: 'h' }] }],
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
    context_management: { edits: [] },
  }
  t.same(readMessagesRequest(anthropic), anthropic)
})

t.test('error: a known member of the wrong shape is refused even beside unknown ones', async (t) => {
  t.throws(() => readChatRequest({ model: 'm', messages: [{ role: 'tool', content: 'x' }], extra: 1 }))
  t.throws(() =>
    readChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function' }] })
  )
  t.throws(() => readCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] }))
  t.throws(() => readMessagesRequest({ model: 'm', max_tokens: 5, messages: [], tool_choice: { type: 'tool' } }))
})

t.test('security: a __proto__ member stays data', async (t) => {
  const body = JSON.parse('{"model":"m","messages":[{"role":"user","content":"x"}],"__proto__":{"polluted":true}}')
  const read = readChatRequest(body) as Record<string, unknown>
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype polluted')
  t.equal(read.polluted, undefined)
})
