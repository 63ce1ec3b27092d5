import t from 'tap'
import { readMessagesRequest } from '../../src/protocols/anthropic-schema.js'
import { readChatRequest } from '../../src/protocols/openai-schema.js'
import { anthropicRequestOf } from '../../src/protocols/to-anthropic.js'
import { openaiRequestOf } from '../../src/protocols/to-openai.js'

// Requests translated each way: every feature the two protocols share, what comes out valid in the other protocol's
// schema, round trips that come back as they went, and the members that cannot be expressed named, not dropped.

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const weather = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'] } },
  required: ['city'],
}

const openaiAgentTurn = {
  model: 'fast',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'developer', content: [{ type: 'text', text: 'Use tools.' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Weather in Paris and Oslo? And this image:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'auto' } },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo","unit":"C"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '18 C' },
    { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '9 C' }] },
    { role: 'user', content: 'Thanks. Which is warmer?' },
  ],
  max_completion_tokens: 300,
  temperature: 0.2,
  top_p: 0.9,
  stop: ['END'],
  user: 'user-42',
  tools: [{ type: 'function', function: { name: 'weather', description: 'Current weather', parameters: weather } }],
  tool_choice: 'required',
  parallel_tool_calls: false,
  stream: true,
  stream_options: { include_usage: true },
}

t.test('happy: an OpenAI agent turn becomes the Anthropic request Anthropic documents', async (t) => {
  const { body, refused } = anthropicRequestOf(readChatRequest(openaiAgentTurn))
  t.same(refused, [])
  t.same(body, {
    model: 'fast',
    max_tokens: 300,
    system: [
      { type: 'text', text: 'You are terse.' },
      { type: 'text', text: 'Use tools.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather in Paris and Oslo? And this image:' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'weather', input: { city: 'Oslo', unit: 'C' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18 C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '9 C' }] },
          { type: 'text', text: 'Thanks. Which is warmer?' },
        ],
      },
    ],
    temperature: 0.2,
    top_p: 0.9,
    stop_sequences: ['END'],
    metadata: { user_id: 'user-42' },
    tools: [{ name: 'weather', description: 'Current weather', input_schema: weather }],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    stream: true,
  })
  t.ok(readMessagesRequest(body), 'valid as an Anthropic request')
})

t.test('happy: tool_choice and response_format each way', async (t) => {
  const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
  const choice = (tool_choice: unknown) => anthropicRequestOf(readChatRequest({ ...base, tool_choice })).body
  t.same(choice('auto').tool_choice, { type: 'auto' })
  t.same(choice('none').tool_choice, { type: 'none' })
  t.same(choice({ type: 'function', function: { name: 'weather' } }).tool_choice, { type: 'tool', name: 'weather' })

  const schema = {
    type: 'object',
    properties: { n: { type: 'integer' } },
    required: ['n'],
    additionalProperties: false,
  }
  const format = (response_format: unknown) =>
    anthropicRequestOf(readChatRequest({ ...base, response_format })).body.output_config
  t.same(format({ type: 'json_schema', json_schema: { name: 'count', schema, strict: true } }), {
    format: { type: 'json_schema', schema },
  })
  t.equal(format({ type: 'json_object' }), undefined)
  t.same(
    anthropicRequestOf(readChatRequest({ ...base, response_format: { type: 'json_object' } })).body.system,
    [{ type: 'text', text: 'Answer with one JSON object and nothing else.' }],
    'json_object: an instruction, since a schema would have to fix the members'
  )
  t.equal(format({ type: 'text' }), undefined)

  const back = (over: object) =>
    openaiRequestOf(
      readMessagesRequest({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...over })
    )
  t.same(back({ tool_choice: { type: 'any' } }).body.tool_choice, 'required')
  t.same(back({ tool_choice: { type: 'none' } }).body.tool_choice, 'none')
  t.same(back({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } }).body, {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 10,
    tool_choice: 'auto',
    parallel_tool_calls: false,
  })
  t.same(back({ tool_choice: { type: 'tool', name: 'weather' } }).body.tool_choice, {
    type: 'function',
    function: { name: 'weather' },
  })
  const json = { name: 'output', schema, strict: true }
  t.same(back({ output_config: { format: { type: 'json_schema', schema } } }).body.response_format, {
    type: 'json_schema',
    json_schema: json,
  })
  t.same(
    back({ output_format: { type: 'json_schema', schema } }).body.response_format.json_schema,
    json,
    'the beta member'
  )
})

const anthropicAgentTurn = {
  model: 'primary',
  max_tokens: 1024,
  system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        { type: 'text', text: 'Weather where this was taken?', cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Oslo' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '18 C' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          content: [{ type: 'text', text: 'station down' }],
          is_error: true,
        },
        { type: 'text', text: 'And now?' },
      ],
    },
  ],
  metadata: { user_id: 'user-42' },
  stop_sequences: ['END'],
  temperature: 0.5,
  tools: [
    { name: 'weather', description: 'Current weather', input_schema: weather, cache_control: { type: 'ephemeral' } },
  ],
  tool_choice: { type: 'auto' },
  stream: true,
}

t.test('happy: an Anthropic agent turn becomes the OpenAI request OpenAI documents', async (t) => {
  const { body, refused } = openaiRequestOf(readMessagesRequest(anthropicAgentTurn))
  t.same(refused, [])
  t.same(body, {
    model: 'primary',
    max_tokens: 1024,
    messages: [
      {
        role: 'system',
        content: [{ type: 'text', text: 'You are terse.', prompt_cache_breakpoint: { mode: 'explicit' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'text', text: 'Weather where this was taken?', prompt_cache_breakpoint: { mode: 'explicit' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18 C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: station down' },
      { role: 'user', content: 'And now?' },
    ],
    temperature: 0.5,
    stop: ['END'],
    user: 'user-42',
    tools: [{ type: 'function', function: { name: 'weather', parameters: weather, description: 'Current weather' } }],
    tool_choice: 'auto',
    stream: true,
    stream_options: { include_usage: true },
  })
  t.ok(readChatRequest(body), 'valid as an OpenAI request')
})

t.test('happy: round trips come back as they went', async (t) => {
  const plain = {
    model: 'm',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '18 C' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/webp;base64,${PNG}` } }] },
    ],
    max_tokens: 50,
    temperature: 0.3,
    stop: ['END'],
    tools: [{ type: 'function', function: { name: 'weather', parameters: weather } }],
    tool_choice: { type: 'function', function: { name: 'weather' } },
    response_format: { type: 'json_schema', json_schema: { name: 'output', schema: weather, strict: true } },
  }
  const there = anthropicRequestOf(readChatRequest(plain))
  const back = openaiRequestOf(readMessagesRequest(there.body))
  t.same([there.refused, back.refused], [[], []])
  t.same(back.body, plain)

  const anthropic = { ...anthropicAgentTurn, system: 'Be brief.', stream: false }
  const across = openaiRequestOf(readMessagesRequest(anthropic))
  const home = anthropicRequestOf(readChatRequest(across.body))
  t.same(home.refused, [])
  t.same(home.body.messages[0].content[2], {
    type: 'text',
    text: 'Weather where this was taken?',
    cache_control: { type: 'ephemeral' },
  })
  t.same(home.body.messages[1], anthropic.messages[1])
  t.same(home.body.tools, [{ name: 'weather', description: 'Current weather', input_schema: weather }])
})

t.test('error: members one protocol cannot express are refused by name', async (t) => {
  const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
  const refusedToAnthropic = (over: object) => anthropicRequestOf(readChatRequest({ ...base, ...over })).refused
  t.same(refusedToAnthropic({ logprobs: true, top_logprobs: 3, n: 2, seed: 7, temperature: 1.5 }), [
    'n',
    'logprobs',
    'top_logprobs',
    'seed',
    'temperature',
  ])
  t.same(refusedToAnthropic({ n: 1, logprobs: false, frequency_penalty: 0, store: false, metadata: {} }), [], 'neutral')
  t.same(refusedToAnthropic({ a_new_feature: { on: true } }), ['a_new_feature'], 'an unknown member')
  t.same(
    refusedToAnthropic({
      messages: [
        { role: 'user', name: 'ann', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png', detail: 'low' } }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1' } }],
        },
        { role: 'function', name: 'f', content: 'x' },
      ],
    }),
    [
      'messages[0].name',
      'messages[0].content[0]',
      'messages[1].content[0].image_url.detail',
      'messages[1].content[0].image_url.url',
      'messages[2].tool_calls[0].function.arguments',
      'messages[3]',
    ]
  )
  t.same(refusedToAnthropic({ tools: [{ type: 'custom', custom: { name: 'x' } }] }), ['tools[0]'])

  const anthropicBase = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }
  const refusedToOpenAI = (over: object) => openaiRequestOf(readMessagesRequest({ ...anthropicBase, ...over })).refused
  t.same(refusedToOpenAI({ top_k: 5, thinking: { type: 'enabled', budget_tokens: 2048 }, container: 'c' }), [
    'thinking',
    'top_k',
    'container',
  ])
  t.same(refusedToOpenAI({ thinking: { type: 'disabled' }, service_tier: 'auto' }), [], 'neutral')
  t.same(refusedToOpenAI({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), ['tools[0]'])
  t.same(
    refusedToOpenAI({
      messages: [
        {
          role: 'user',
          content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }],
        },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] },
        { role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] },
      ],
      output_config: { effort: 'high' },
    }),
    ['messages[0].content[0]', 'messages[1].content[0]', 'messages[2].content[0].source', 'output_config.effort']
  )
  t.same(
    refusedToOpenAI({
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [
                { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } },
              ],
            },
          ],
        },
      ],
    }),
    ['messages[0].content[0].content'],
    'images in a tool result, named once'
  )
})

// The ApiError a read throws.
function rejection(read: () => unknown): any {
  try {
    read()
  } catch (e) {
    return e
  }
  throw new Error('no error')
}

t.test('error: bad bodies are a 400 naming the member', async (t) => {
  const issue = (read: () => unknown) => {
    const e = rejection(read)
    t.match(e, { status: 400, code: 'bad_request' })
    return e.details.issues.map((i: { path: string }) => i.path)
  }
  t.same(
    issue(() => readChatRequest({ model: 'm', messages: [] })),
    ['messages']
  )
  t.same(
    issue(() => readChatRequest({ model: 'm', messages: [{ role: 'user', content: 3 }] })),
    ['messages.0.content']
  )
  t.same(
    issue(() => readChatRequest({ model: 'm', messages: [{ role: 'robot', content: 'x' }] })),
    ['messages.0.role']
  )
  t.same(
    issue(() => readChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 3 })),
    ['temperature']
  )
  t.same(
    issue(() =>
      readChatRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] })
    ),
    ['messages.0.content.0.image_url.url']
  )
  t.same(
    issue(() => readMessagesRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }] })),
    ['max_tokens']
  )
  t.same(
    issue(() =>
      readMessagesRequest({
        model: 'm',
        max_tokens: 5,
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'x' } }],
          },
        ],
      })
    ),
    ['messages.0.content.0.source.media_type']
  )
  t.same(
    issue(() =>
      readMessagesRequest({
        model: 'm',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ name: 'f', input_schema: { type: 'string' } }],
      })
    ),
    ['tools.0.input_schema.type']
  )
})

t.test('security: only image data URLs of the four image types become image data', async (t) => {
  const refused = (url: string) =>
    anthropicRequestOf(
      readChatRequest({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
      })
    ).refused
  t.same(refused('data:text/html;base64,PHNjcmlwdD4='), ['messages[0].content[0].image_url.url'])
  t.same(refused('file:///etc/passwd'), ['messages[0].content[0].image_url.url'])
  t.same(refused(`data:image/gif;base64,${PNG}`), [])
})
