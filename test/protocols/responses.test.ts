import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import t from 'tap'
import { readMessagesRequest } from '../../src/protocols/anthropic-schema.js'
import { readChatRequest } from '../../src/protocols/openai-schema.js'
import { anthropicMessageOf } from '../../src/protocols/to-anthropic.js'
import { openaiCompletionOf } from '../../src/protocols/to-openai.js'
import { json } from '../support/fake-upstream.js'
import { sdks } from './sdks.js'

// Whole answers translated each way and read by the other protocol's official SDK, which is what a caller sees.
// The requests the SDKs sent on the way are held against our schemas of them.

const anthropicAnswer = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'text', text: 'Checking both.', citations: null },
    { type: 'tool_use', id: 'toolu_01A', name: 'weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
    {
      type: 'tool_use',
      id: 'toolu_01B',
      name: 'weather',
      input: { city: 'Oslo', unit: 'C' },
      caller: { type: 'direct' },
    },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 12, cache_read_input_tokens: 1800, cache_creation_input_tokens: 200, output_tokens: 40 },
}

const openaiAnswer = {
  id: 'chatcmpl-B9MHDbslfCsjqKAdN3Kj',
  object: 'chat.completion',
  created: 1741569952,
  model: 'gpt-4.1-2025-04-14',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo","unit":"C"}' } },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    },
  ],
  usage: {
    prompt_tokens: 2012,
    completion_tokens: 40,
    total_tokens: 2052,
    prompt_tokens_details: { cached_tokens: 1800 },
  },
}

const weatherTool = {
  name: 'weather',
  description: 'Current weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}

t.test('happy: an Anthropic answer, through the OpenAI SDK', async (t) => {
  const { server, openai } = await sdks(t)
  server.next(json(200, openaiCompletionOf(anthropicAnswer, { created: 1741569952, model: 'primary' })))
  const completion: OpenAI.ChatCompletion = await openai.chat.completions.create({
    model: 'primary',
    messages: [{ role: 'user', content: 'Weather in Paris and Oslo?' }],
    tools: [{ type: 'function', function: weatherTool }],
  })
  t.ok(readChatRequest(server.seen[0].body), 'the SDK request is valid to our schema')
  const [choice] = completion.choices
  t.equal(choice.finish_reason, 'tool_calls')
  t.equal(completion.model, 'primary', 'the name the caller used')
  t.equal(choice.message.content, 'Checking both.')
  t.same(
    choice.message.tool_calls?.map(
      (c) => c.type === 'function' && [c.id, c.function.name, JSON.parse(c.function.arguments)]
    ),
    [
      ['toolu_01A', 'weather', { city: 'Paris' }],
      ['toolu_01B', 'weather', { city: 'Oslo', unit: 'C' }],
    ]
  )
  t.same(completion.usage, {
    prompt_tokens: 2012,
    completion_tokens: 40,
    total_tokens: 2052,
    prompt_tokens_details: { cached_tokens: 1800, cache_write_tokens: 200 },
  })
})

t.test('happy: an OpenAI answer, through the Anthropic SDK', async (t) => {
  const { server, anthropic } = await sdks(t)
  server.next(json(200, anthropicMessageOf(openaiAnswer, { model: 'primary' })))
  const message: Anthropic.Message = await anthropic.messages.create({
    model: 'primary',
    max_tokens: 500,
    messages: [{ role: 'user', content: 'Weather in Paris and Oslo?' }],
    tools: [{ name: 'weather', description: 'Current weather', input_schema: weatherTool.parameters as never }],
  })
  t.ok(readMessagesRequest(server.seen[0].body), 'the SDK request is valid to our schema')
  t.equal(message.stop_reason, 'tool_use')
  t.equal(message.model, 'primary', 'the name the caller used')
  t.same(
    message.content.map((b) => b.type === 'tool_use' && [b.id, b.name, b.input]),
    [
      ['call_a', 'weather', { city: 'Paris' }],
      ['call_b', 'weather', { city: 'Oslo', unit: 'C' }],
    ]
  )
  t.match(message.usage, { input_tokens: 212, output_tokens: 40, cache_read_input_tokens: 1800 })
})

t.test('happy: text, JSON output and stop reasons each way', async (t) => {
  const text = (stop_reason: string, content: string) =>
    openaiCompletionOf({ ...anthropicAnswer, stop_reason, content: [{ type: 'text', text: content }] }).choices[0]
  t.same(text('end_turn', '{"n":3}'), {
    index: 0,
    message: { role: 'assistant', content: '{"n":3}', refusal: null },
    finish_reason: 'stop',
    logprobs: null,
  })
  t.equal(text('max_tokens', 'x').finish_reason, 'length')
  t.equal(text('stop_sequence', 'x').finish_reason, 'stop')
  t.equal(text('refusal', 'x').finish_reason, 'content_filter')

  const message = (finish_reason: string, content: string | null, refusal: string | null = null) =>
    anthropicMessageOf({
      ...openaiAnswer,
      choices: [{ index: 0, message: { role: 'assistant', content, refusal }, finish_reason }],
    })
  t.match(message('stop', '{"n":3}'), { content: [{ type: 'text', text: '{"n":3}' }], stop_reason: 'end_turn' })
  t.equal(message('length', 'x').stop_reason, 'max_tokens')
  t.equal(message('content_filter', 'x').stop_reason, 'refusal')
  t.match(message('stop', null, 'I cannot help with that.'), {
    content: [{ type: 'text', text: 'I cannot help with that.' }],
    stop_reason: 'refusal',
  })
})

t.test('happy: a round trip keeps content, tool calls and usage', async (t) => {
  const back = openaiCompletionOf(anthropicMessageOf(openaiAnswer), { created: openaiAnswer.created })
  t.same(back.choices, openaiAnswer.choices)
  t.same(back.usage, {
    ...openaiAnswer.usage,
    prompt_tokens_details: { cached_tokens: 1800, cache_write_tokens: 0 },
  })
  const again = anthropicMessageOf(openaiCompletionOf(anthropicAnswer))
  t.same(again.content, anthropicAnswer.content)
  t.same(again.usage, {
    input_tokens: 12,
    output_tokens: 40,
    cache_read_input_tokens: 1800,
    cache_creation_input_tokens: 200,
  })
})

t.test('error: an answer missing its parts still translates to a well-formed one', async (t) => {
  t.match(anthropicMessageOf({}), { type: 'message', content: [], stop_reason: 'end_turn', usage: { input_tokens: 0 } })
  t.match(openaiCompletionOf({}), { object: 'chat.completion', choices: [{ message: { content: null } }] })
  t.same(
    anthropicMessageOf({
      choices: [
        {
          message: { tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"broken' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    }).content,
    [{ type: 'tool_use', id: 'c', name: 'f', input: {}, caller: { type: 'direct' } }]
  )
})
