import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { parseConfig } from '../../src/ops/config.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { startTestServer, type TestServer } from '../support/server.js'
import type { Teardown } from '../support/teardown.js'

// STUDIO_UPSTREAM=echo: completions answered in-process, with no provider, on the native route and through the
// official SDKs, whole and streamed, with usage and a tool call; each recorded and counted against the quota.

const dbEnv = await testDatabase(t)

const serve = (t: Teardown, env: Record<string, string> = {}) =>
  startTestServer(t, { STUDIO_UPSTREAM: 'echo', ...env }, { dbEnv })

const openai = (s: TestServer, apiKey: string) => new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey, maxRetries: 0 })
const anthropic = (s: TestServer, apiKey: string) => new Anthropic({ baseURL: `${s.url}/api`, apiKey, maxRetries: 0 })

const used = async (s: TestServer, key: string) =>
  ((await (await s.fetch('/api/v1/me', { key })).json()) as { quota: { used: number } }).quota.used

async function recorded(s: TestServer, key: string) {
  const prefix = key.split('_')[1]
  const [row] = await eventually(async () => {
    const r = await s.db.sql`select * from completions where key_prefix = ${prefix}`
    return r.length > 0 && r
  })
  return row
}

// The events of a native stream: each `event:` name with its parsed data.
async function nativeEvents(res: Response) {
  const events: { event: string; data: any }[] = []
  for (const block of (await res.text()).split('\n\n')) {
    const [event, data] = block.split('\n')
    if (event?.startsWith('event: ')) events.push({ event: event.slice(7), data: JSON.parse(data.slice(6)) })
  }
  return events
}

const weather: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
    },
  },
}

t.test('happy', async (t) => {
  const s = await serve(t)

  t.test('the start says loudly that echo answers the completions', async (t) => {
    const line = s.log.lines.find((l) => l.includes('echo upstream is on'))
    t.ok(line, 'a line says so')
    t.equal(JSON.parse(line!).level, 'warn')
  })

  t.test('the native route echoes the last message, with usage counted in words, recorded and counted', async (t) => {
    const key = await s.key()
    const res = await s.fetch('/api/v1/ai/completions', {
      method: 'POST',
      key,
      json: { system: 'Be brief', messages: [{ role: 'user', content: 'Say hello to the echo' }] },
    })
    t.equal(res.status, 200)
    t.same(await res.json(), {
      model: 'echo',
      content: 'Say hello to the echo',
      stop_reason: 'end_turn',
      usage: { input_tokens: 7, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      cost_usd: '0.000000',
    })
    const row = await recorded(s, key)
    t.match(row, { upstream: 'echo', upstream_model: 'echo', outcome: 'ok', input_tokens: 7, output_tokens: 5 })
    t.equal(row.cost_micros, '0', 'echo is free: 0, a price')
    t.equal(await used(s, key), 1)
  })

  t.test('the native route streams the answer word by word, then done', async (t) => {
    const key = await s.key()
    const res = await s.fetch('/api/v1/ai/completions', {
      method: 'POST',
      key,
      json: { stream: true, max_tokens: 3, messages: [{ role: 'user', content: 'one two three four' }] },
    })
    t.equal(res.headers.get('content-type'), 'text/event-stream')
    const events = await nativeEvents(res)
    t.same(
      events.filter((e) => e.event === 'delta').map((e) => e.data.text),
      ['one ', 'two ', 'three']
    )
    t.same(events.at(-1), {
      event: 'done',
      data: {
        model: 'echo',
        content: 'one two three',
        stop_reason: 'max_tokens',
        usage: { input_tokens: 4, output_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
        cost_usd: '0.000000',
      },
    })
    t.match(await recorded(s, key), { upstream: 'echo', outcome: 'ok', output_tokens: 3 })
  })

  t.test('the openai SDK: a whole answer, and a stream with its usage chunk', async (t) => {
    const client = openai(s, await s.key())
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello there' }]
    const whole = await client.chat.completions.create({ model: 'fast', messages })
    t.equal(whole.choices[0].message.content, 'Hello there')
    t.equal(whole.choices[0].finish_reason, 'stop')
    t.equal(whole.model, 'fast')
    t.match(whole.usage, { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 })
    const stream = await client.chat.completions.create({
      model: 'primary',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      usage ??= chunk.usage
    }
    t.equal(text, 'Hello there')
    t.match(usage, { prompt_tokens: 2, completion_tokens: 2 })
  })

  t.test('the openai SDK: a tool call when asked for, then an answer from its result', async (t) => {
    const client = openai(s, await s.key())
    const ask: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather? Use get_weather' }
    const first = await client.chat.completions.create({ model: 'primary', messages: [ask], tools: [weather] })
    t.equal(first.choices[0].finish_reason, 'tool_calls')
    const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
    t.equal(call.function.name, 'get_weather')
    t.same(JSON.parse(call.function.arguments), { city: 'echo', unit: 'celsius' })
    const second = await client.chat.completions.create({
      model: 'primary',
      tools: [weather],
      messages: [ask, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '22°C and sunny' }],
    })
    t.equal(second.choices[0].message.content, '22°C and sunny')
    t.notOk(second.choices[0].message.tool_calls)

    const plain = await client.chat.completions.create({
      model: 'primary',
      messages: [{ role: 'user', content: 'Just chat' }],
      tools: [weather],
    })
    t.equal(plain.choices[0].message.content, 'Just chat', 'no tool named, auto: text')
    const required = await client.chat.completions.create({
      model: 'primary',
      messages: [{ role: 'user', content: 'Just chat' }],
      tools: [weather],
      tool_choice: 'required',
    })
    t.equal(required.choices[0].finish_reason, 'tool_calls', 'required: a tool call')
    const streamed = await client.chat.completions.create({
      model: 'primary',
      messages: [ask],
      tools: [weather],
      stream: true,
    })
    const names: string[] = []
    for await (const chunk of streamed)
      for (const c of chunk.choices[0]?.delta.tool_calls ?? []) if (c.function?.name) names.push(c.function.name)
    t.same(names, ['get_weather'], 'streamed too')
  })

  t.test('the anthropic SDK: a whole answer, a stream, and a tool call it asked for', async (t) => {
    const client = anthropic(s, await s.key())
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello there' }]
    const whole = await client.messages.create({ model: 'fast', max_tokens: 50, messages })
    t.match(whole.content, [{ type: 'text', text: 'Hello there' }])
    t.equal(whole.stop_reason, 'end_turn')
    t.match(whole.usage, { input_tokens: 2, output_tokens: 2 })

    const stream = client.messages.stream({ model: 'fast', max_tokens: 50, messages })
    const texts: string[] = []
    stream.on('text', (text) => texts.push(text))
    const final = await stream.finalMessage()
    t.same(texts, ['Hello ', 'there'])
    t.match(final.usage, { output_tokens: 2 })

    const tools: Anthropic.Tool[] = [
      {
        name: 'get_time',
        input_schema: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
      },
    ]
    const call = await client.messages.create({
      model: 'primary',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'What time is it?' }],
      tools,
      tool_choice: { type: 'any' },
    })
    t.equal(call.stop_reason, 'tool_use')
    const use = call.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock
    t.match(use, { name: 'get_time', input: { zone: 'echo' } })
    const after = await client.messages.create({
      model: 'primary',
      max_tokens: 50,
      tools,
      messages: [
        { role: 'user', content: 'What time is it?' },
        { role: 'assistant', content: call.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'noon' }] },
      ],
    })
    t.match(after.content, [{ type: 'text', text: 'noon' }])
  })
})

t.test('errors', async (t) => {
  t.test('the setting: echo alone or in a list, never the default, nothing else needed', async (t) => {
    t.same(parseConfig({}).STUDIO_UPSTREAM, ['anthropic'])
    t.same(parseConfig({ STUDIO_UPSTREAM: 'echo' }).STUDIO_UPSTREAM, ['echo'])
    t.same(parseConfig({ STUDIO_UPSTREAM: 'openai,echo', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).STUDIO_UPSTREAM, [
      'openai',
      'echo',
    ])
    t.same(
      parseConfig({ STUDIO_UPSTREAM: 'echo', STUDIO_MODEL_ALIASES: 'coder=openai:gpt-4.1' }).STUDIO_MODEL_ALIASES,
      { coder: { openai: 'gpt-4.1' } },
      'echo answers every alias'
    )
    t.throws(() => parseConfig({ STUDIO_UPSTREAM: 'echo,echo' }), /^STUDIO_UPSTREAM: must not name/)
  })

  t.test('a bad request is refused before echo is called, as for any upstream', async (t) => {
    const s = await serve(t)
    const key = await s.key()
    const res = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [] } })
    t.equal(res.status, 422)
    const sdk = openai(s, key)
    const e = await sdk.chat.completions
      .create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e)
    t.match(e, { status: 404 })
    t.equal(await used(s, key), 0)
  })
})
