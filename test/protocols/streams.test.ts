import t from 'tap'
import { AnthropicStreamFromOpenAI } from '../../src/protocols/anthropic-stream.js'
import { OpenAIStreamFromAnthropic } from '../../src/protocols/openai-stream.js'
import { type SseEvent, sseText } from '../../src/protocols/sse-events.js'
import { sdks, sseBody } from './sdks.js'

// Streams translated event by event and read by the other protocol's official SDK: each tool call's JSON arguments
// split mid-token across events, two parallel tool calls, text, usage with cached tokens.

// A tool_use block whose JSON input comes in the given fragments.
const toolUse = (index: number, id: string, fragments: string[]): [string, object][] => [
  [
    'content_block_start',
    { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: 'weather', input: {} } },
  ],
  ...fragments.map((partial_json): [string, object] => [
    'content_block_delta',
    { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
  ]),
  ['content_block_stop', { type: 'content_block_stop', index }],
]

const anthropicEvents: [string, object][] = [
  [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 25, cache_read_input_tokens: 1800, cache_creation_input_tokens: 0, output_tokens: 1 },
      },
    },
  ],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['ping', { type: 'ping' }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking ' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'both.' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ...toolUse(1, 'toolu_A', ['', '{"ci', 'ty": "Pa', 'ris"}']),
  ...toolUse(2, 'toolu_B', ['{"city": "Os', 'lo", "unit": "\\u00b0', 'C"}']),
  [
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 89 },
    },
  ],
  ['message_stop', { type: 'message_stop' }],
]

const translateAnthropic = (includeUsage: boolean) => {
  const stream = new OpenAIStreamFromAnthropic({ includeUsage, created: 1741569952, model: 'primary' })
  return anthropicEvents.flatMap(([type, data]) => stream.push(type, JSON.stringify(data)))
}

const chunks = (events: SseEvent[]) => events.map((e) => (e.data === '[DONE]' ? e.data : JSON.parse(e.data)))

const weather = {
  type: 'function' as const,
  function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
}

t.test('happy: an Anthropic stream, through the OpenAI SDK', async (t) => {
  const { server, openai } = await sdks(t)
  server.next(sseBody(sseText(translateAnthropic(true))))
  const stream = openai.chat.completions.stream({
    model: 'primary',
    messages: [{ role: 'user', content: 'Weather in Paris and Oslo?' }],
    tools: [weather],
    stream_options: { include_usage: true },
  })
  const completion = await stream.finalChatCompletion()
  const [choice] = completion.choices
  t.equal(completion.model, 'primary', 'the name the caller used')
  t.equal(choice.message.content, 'Checking both.')
  t.equal(choice.finish_reason, 'tool_calls')
  t.same(
    choice.message.tool_calls?.map(
      (c) => c.type === 'function' && [c.id, c.function.name, JSON.parse(c.function.arguments)]
    ),
    [
      ['toolu_A', 'weather', { city: 'Paris' }],
      ['toolu_B', 'weather', { city: 'Oslo', unit: '°C' }],
    ]
  )
  t.same(completion.usage, {
    prompt_tokens: 1825,
    completion_tokens: 89,
    total_tokens: 1914,
    prompt_tokens_details: { cached_tokens: 1800, cache_write_tokens: 0 },
  })
  t.equal(server.seen[0].body.stream, true)
})

t.test('happy: each tool call has its index, id and name first, then its arguments', async (t) => {
  const out = chunks(translateAnthropic(false))
  const calls = out.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? [])
  t.same(calls.slice(0, 4), [
    { index: 0, id: 'toolu_A', type: 'function', function: { name: 'weather', arguments: '' } },
    { index: 0, function: { arguments: '{"ci' } },
    { index: 0, function: { arguments: 'ty": "Pa' } },
    { index: 0, function: { arguments: 'ris"}' } },
  ])
  t.same(calls[4], { index: 1, id: 'toolu_B', type: 'function', function: { name: 'weather', arguments: '' } })
  t.same(out.at(-1), '[DONE]')
  t.notOk(
    out.some((c) => c !== '[DONE]' && c.usage),
    'no usage chunk unless asked for'
  )
  t.ok(
    out.every((c) => c === '[DONE]' || (c.object === 'chat.completion.chunk' && c.id === 'msg_01')),
    'every chunk says what it is'
  )
})

const openaiChunks = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: null, refusal: null }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'Checking' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: ' both.' }, finish_reason: null }] },
  {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }],
        },
        finish_reason: null,
      },
    ],
  },
  ...['{"', 'city', '":"Pa', 'ris"}'].map((a) => ({
    choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: a } }] }, finish_reason: null }],
  })),
  {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"ci' } }],
        },
        finish_reason: null,
      },
    ],
  },
  ...['ty":"Os', 'lo","unit":"\\u00b0', 'C"}'].map((a) => ({
    choices: [{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: a } }] }, finish_reason: null }],
  })),
  { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  {
    choices: [],
    usage: {
      prompt_tokens: 2012,
      completion_tokens: 40,
      total_tokens: 2052,
      prompt_tokens_details: { cached_tokens: 1800 },
    },
  },
].map((c) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', ...c }))

const translateOpenAI = () => {
  const stream = new AnthropicStreamFromOpenAI({ model: 'primary' })
  return [...openaiChunks.flatMap((c) => stream.push('', JSON.stringify(c))), ...stream.push('', '[DONE]')]
}

t.test('happy: an OpenAI stream, through the Anthropic SDK', async (t) => {
  const { server, anthropic } = await sdks(t)
  server.next(sseBody(sseText(translateOpenAI())))
  const message = await anthropic.messages
    .stream({ model: 'primary', max_tokens: 500, messages: [{ role: 'user', content: 'Weather in Paris and Oslo?' }] })
    .finalMessage()
  t.equal(message.stop_reason, 'tool_use')
  t.equal(message.model, 'primary', 'the name the caller used')
  t.same(
    message.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' && [b.id, b.name, b.input])),
    ['Checking both.', ['call_a', 'weather', { city: 'Paris' }], ['call_b', 'weather', { city: 'Oslo', unit: '°C' }]]
  )
  t.match(message.usage, { input_tokens: 212, output_tokens: 40, cache_read_input_tokens: 1800 })
  t.equal(server.seen[0].body.stream, true)
})

t.test('happy: the Anthropic events come in the documented order', async (t) => {
  const types = translateOpenAI().map((e) => e.event)
  t.same(types, [
    'message_start',
    'content_block_start',
    'content_block_delta',
    'content_block_delta',
    'content_block_stop',
    'content_block_start',
    ...Array(4).fill('content_block_delta'),
    'content_block_stop',
    'content_block_start',
    ...Array(4).fill('content_block_delta'),
    'content_block_stop',
    'message_delta',
    'message_stop',
  ])
  const stream = new AnthropicStreamFromOpenAI()
  t.same(
    stream.finish().map((e) => e.event),
    ['message_start', 'message_delta', 'message_stop'],
    'an upstream that ended without a chunk'
  )
  t.same(stream.push('', '[DONE]'), [], 'nothing after the end')
})

t.test('happy: plain text streams each way', async (t) => {
  const { server, openai, anthropic } = await sdks(t)
  const text = new AnthropicStreamFromOpenAI()
  const events = [
    ...text.push('', JSON.stringify({ ...openaiChunks[1], choices: [{ index: 0, delta: { content: '{"n":' } }] })),
    ...text.push(
      '',
      JSON.stringify({ ...openaiChunks[1], choices: [{ index: 0, delta: { content: '3}' }, finish_reason: 'stop' }] })
    ),
    ...text.finish(),
  ]
  server.next(sseBody(sseText(events), 3))
  const message = await anthropic.messages
    .stream({ model: 'fast', max_tokens: 50, messages: [{ role: 'user', content: 'Count.' }] })
    .finalMessage()
  t.match(message, { content: [{ type: 'text', text: '{"n":3}' }], stop_reason: 'end_turn' })

  const reply = new OpenAIStreamFromAnthropic({ includeUsage: false, created: 1 })
  const anthropicText: [string, object][] = [
    anthropicEvents[0],
    anthropicEvents[1],
    ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }],
    ['content_block_stop', { index: 0 }],
    ['message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 1 } }],
    ['message_stop', {}],
  ]
  server.next(sseBody(sseText(anthropicText.flatMap(([type, data]) => reply.push(type, JSON.stringify(data))))))
  const completion = await openai.chat.completions
    .stream({ model: 'fast', messages: [{ role: 'user', content: 'Hi' }] })
    .finalChatCompletion()
  t.match(completion.choices[0], { message: { content: 'Hi' }, finish_reason: 'length' })
})

t.test('happy: parallel tool calls whose fragments interleave still arrive whole', async (t) => {
  const { server, anthropic } = await sdks(t)
  const stream = new AnthropicStreamFromOpenAI()
  const call = (index: number, fn: object, id?: string) => ({
    id: 'c',
    model: 'm',
    choices: [{ index: 0, delta: { tool_calls: [{ index, ...(id && { id, type: 'function' }), function: fn }] } }],
  })
  const events = [
    call(0, { name: 'weather', arguments: '{"city":' }, 'call_a'),
    call(1, { name: 'weather', arguments: '{"ci' }, 'call_b'),
    call(0, { arguments: '"Paris"}' }),
    call(1, { arguments: 'ty":"Oslo"}' }),
    { id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ].flatMap((c) => stream.push('', JSON.stringify(c)))
  server.next(sseBody(sseText([...events, ...stream.push('', '[DONE]')])))
  const message = await anthropic.messages
    .stream({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] })
    .finalMessage()
  t.same(
    message.content.map((b) => b.type === 'tool_use' && [b.id, b.input]),
    [
      ['call_a', { city: 'Paris' }],
      ['call_b', { city: 'Oslo' }],
    ]
  )
})
