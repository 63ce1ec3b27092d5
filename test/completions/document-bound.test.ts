import t, { type Test } from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { prefixOf } from '../../src/accounts/key-format.js'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'
import type { TestServer } from '../support/server.js'
import { sdkUpstreams, used } from '../support/sdk-upstreams.js'

// A document read from a file (a PDF by URL, base64 data or file id; an OpenAI file part) is a few bytes of JSON but
// can be hundreds of thousands of tokens upstream, which nothing here bounds before the call: with a budget or a
// tokens-per-minute limit it is refused in the caller's protocol before any upstream call, holding nothing; with
// neither it goes through as sent (docs/spend.md). So is a server tool (Anthropic's `web_search_…` and the like, a
// `container_upload` block, OpenAI's `web_search_options`), whose results become input tokens upstream.

const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const anthropicClient = (s: TestServer, apiKey: string) =>
  new Anthropic({ baseURL: `${s.url}/api`, apiKey, maxRetries: 0 })
const openaiClient = (s: TestServer, apiKey: string) =>
  new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey, maxRetries: 0 })

const byUrl = { type: 'document', source: { type: 'url', url: 'https://docs.example/annual-report.pdf' } } as const
const byData = {
  type: 'document',
  source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjcK' },
} as const
// The Files API's source is in the beta SDK's types only.
const byFileId = { type: 'document', source: { type: 'file', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' } }
const asText = {
  type: 'document',
  source: { type: 'text', media_type: 'text/plain', data: 'The report, as text.' },
} as const
const ask = { type: 'text', text: 'Summarise it' } as const
const fileById = { type: 'file', file: { file_id: 'file-6F2ksmvXxt4VdoqmHRw6kL' } } as const

// Each document part, and the member a refusal names: in the message's content, or in a tool result's.
const documents: [string, Anthropic.MessageParam[]][] = [
  ['messages[0].content[0]', [{ role: 'user', content: [byUrl, ask] }]],
  ['messages[0].content[1]', [{ role: 'user', content: [ask, byData] }]],
  ['messages[0].content[0]', [{ role: 'user', content: [byFileId as unknown as Anthropic.DocumentBlockParam] }]],
  [
    'messages[2].content[0].content[0]',
    [
      { role: 'user', content: 'Read the report' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch_report', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [byUrl] }] },
    ],
  ],
]

const weather = { name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } }
const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } as const
// In the beta SDK's types only.
const webFetch = { type: 'web_fetch_20250910', name: 'web_fetch' } as unknown as Anthropic.ToolUnion
const codeExecution = { type: 'code_execution_20250825', name: 'code_execution' } as unknown as Anthropic.ToolUnion
const upload = {
  type: 'container_upload',
  file_id: 'file_011CNha8iCJcU1wXNR6q4V8w',
} as unknown as Anthropic.TextBlockParam
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Say hello' }]

// Each server tool or upload, and the member a refusal names.
const serverTools: [string, Anthropic.ToolUnion[], Anthropic.MessageParam[]][] = [
  ['tools[1]', [weather, webSearch], hello],
  ['tools[1]', [{ ...weather, type: 'custom' }, webFetch], hello],
  ['tools[0]', [codeExecution], hello],
  ['messages[0].content[1]', [weather], [{ role: 'user', content: [ask, upload] }]],
]

async function budgetedKey(s: TestServer) {
  const address = `document-${Math.random().toString(36).slice(2)}@example.com`
  const key = await s.key({ email: address })
  const r = await cli(['budget', 'set', '--email', address, '5.00'])
  t.equal(r.code, 0, r.err.join('\n'))
  return key
}

const spendOf = async (s: TestServer, key: string) =>
  ((await (await s.fetch('/api/v1/me', { key })).json()) as { spend: { spent: string; reserved: string } }).spend

// What a refusal under the account's budget leaves: nothing sent upstream, held, spent, or counted against the quota.
async function nothingSpent(t: Test, s: TestServer, key: string, upstream: { seen: unknown[] }) {
  t.equal(upstream.seen.length, 0, 'the upstream saw none of them')
  t.match(await spendOf(s, key), { budget: '5.000000', spent: '0.000000', reserved: '0.000000' })
  t.equal(await used(s, key), 0, 'no quota unit spent')
}

t.test("with the account's budget, /messages refuses each document from a file before the upstream", async (t) => {
  const { s, anthropic } = await sdkUpstreams(t, dbEnv, 'anthropic')
  const key = await budgetedKey(s)
  for (const [member, messages] of documents) {
    const e = await anthropicClient(s, key)
      .messages.create({ model: 'fast', max_tokens: 50, messages })
      .catch((e) => e)
    t.ok(e instanceof Anthropic.UnprocessableEntityError, member)
    t.equal(e.error.error.type, 'invalid_request_error')
    t.equal(e.error.error.code, 'invalid_request')
    t.equal(
      e.error.error.message,
      `${member}: a document or file's tokens cannot be bounded before the upstream call (the upstream counts its ` +
        'pages), and this account or key has a budget; send its text as text, or call with no budget or ' +
        'tokens-per-minute limit'
    )
  }
  await nothingSpent(t, s, key, anthropic)
  const text = await anthropicClient(s, key).messages.create({
    model: 'fast',
    max_tokens: 50,
    messages: [{ role: 'user', content: [asText, ask] }],
  })
  t.same(text.content, [{ type: 'text', text: 'Hello' }], 'a document given as text is bounded by its bytes')
  t.same(anthropic.seen[0].body.messages[0].content[0], asText)
})

t.test("with the key's budget, /chat/completions refuses a file part in OpenAI's body", async (t) => {
  const { s, openai } = await sdkUpstreams(t, dbEnv, 'openai')
  const key = await s.key()
  const r = await cli(['keys', 'limit', prefixOf(key), '--budget', '5.00'])
  t.equal(r.code, 0, r.err.join('\n'))
  const e = await openaiClient(s, key)
    .chat.completions.create({ model: 'fast', max_tokens: 50, messages: [{ role: 'user', content: [ask, fileById] }] })
    .catch((e) => e)
  t.ok(e instanceof OpenAI.UnprocessableEntityError)
  t.equal(e.code, 'invalid_request')
  t.equal(e.type, 'invalid_request_error')
  t.equal(e.param, 'messages[0].content[1]')
  t.match(e.message, /^422 messages\[0\]\.content\[1\]: a document or file's tokens cannot be bounded/)
  t.equal(openai.seen.length, 0, 'the upstream saw nothing')
  const [held] = await s.db.sql<{ held: string; spent: string }[]>`
    select (select coalesce(sum(micros), 0) from key_budget_holds where prefix = ${prefixOf(key)})::text as held,
      (select coalesce(sum(spent_micros), 0) from key_spend where prefix = ${prefixOf(key)})::text as spent`
  t.same(held, { held: '0', spent: '0' }, 'nothing held or spent under the key')
  t.equal(await used(s, key), 0)
})

t.test('with a tokens-per-minute limit, a document is refused and holds nothing of the window', async (t) => {
  const { s, anthropic } = await sdkUpstreams(t, dbEnv, 'anthropic')
  const key = await s.key()
  const LIMIT = 2000
  const r = await cli(['keys', 'limit', prefixOf(key), '--tokens-per-minute', String(LIMIT)])
  t.equal(r.code, 0, r.err.join('\n'))
  const e = await anthropicClient(s, key)
    .messages.create({ model: 'fast', max_tokens: 50, messages: documents[0][1] })
    .catch((e) => e)
  t.ok(e instanceof Anthropic.UnprocessableEntityError)
  t.match(e.error.error.message, /^messages\[0\]\.content\[0\]: .* this key has a tokens-per-minute limit;/)
  t.equal(anthropic.seen.length, 0)
  // A call whose bound (its body's bytes plus max_tokens) is nearly the whole limit still fits: nothing was held.
  const whole = await anthropicClient(s, key).messages.create({
    model: 'fast',
    max_tokens: LIMIT - 200,
    messages: [{ role: 'user', content: 'Say hello' }],
  })
  t.equal(whole.type, 'message')
})

t.test('with no budget or tokens-per-minute limit, documents and files go through as sent', async (t) => {
  const { s, anthropic } = await sdkUpstreams(t, dbEnv, 'anthropic')
  const key = await s.key()
  const message = await anthropicClient(s, key).messages.create({
    model: 'fast',
    max_tokens: 50,
    messages: documents[0][1],
  })
  t.same(message.content, [{ type: 'text', text: 'Hello' }])
  t.same(anthropic.seen[0].body.messages[0].content, [byUrl, ask])
  const { s: s2, openai } = await sdkUpstreams(t, dbEnv, 'openai')
  const chat = await openaiClient(s2, await s2.key()).chat.completions.create({
    model: 'fast',
    max_tokens: 50,
    messages: [{ role: 'user', content: [ask, fileById] }],
  })
  t.equal(chat.object, 'chat.completion')
  t.same(openai.seen[0].body.messages[0].content, [ask, fileById])
})

t.test("with the account's budget, /messages refuses each server tool and upload before the upstream", async (t) => {
  const { s, anthropic } = await sdkUpstreams(t, dbEnv, 'anthropic')
  const key = await budgetedKey(s)
  for (const [member, tools, messages] of serverTools) {
    const e = await anthropicClient(s, key)
      .messages.create({ model: 'fast', max_tokens: 50, tools, messages })
      .catch((e) => e)
    t.ok(e instanceof Anthropic.UnprocessableEntityError, member)
    t.equal(e.error.error.code, 'invalid_request')
    t.match(e.error.error.message, `${member}: a `)
    t.match(e.error.error.message, 'tokens cannot be bounded before the upstream call')
  }
  t.equal(
    (
      await anthropicClient(s, key)
        .messages.create({ model: 'fast', max_tokens: 50, tools: [webSearch], messages: hello })
        .catch((e) => e)
    ).error.error.message,
    "tools[0]: a server tool's tokens cannot be bounded before the upstream call (its results become input " +
      'upstream), and this account or key has a budget; call with no budget or tokens-per-minute limit'
  )
  await nothingSpent(t, s, key, anthropic)
  const withTools = await anthropicClient(s, key).messages.create({
    model: 'fast',
    max_tokens: 50,
    tools: [weather, { ...weather, name: 'get_time', type: 'custom' }],
    messages: hello,
  })
  t.same(withTools.content, [{ type: 'text', text: 'Hello' }], 'client tools are bounded by their bytes')
  t.equal(anthropic.seen[0].body.tools.length, 2)
})

t.test("with the key's budget, /chat/completions refuses web_search_options; a function tool goes", async (t) => {
  const { s, openai } = await sdkUpstreams(t, dbEnv, 'openai')
  const key = await s.key()
  const r = await cli(['keys', 'limit', prefixOf(key), '--budget', '5.00'])
  t.equal(r.code, 0, r.err.join('\n'))
  const e = await openaiClient(s, key)
    .chat.completions.create({
      model: 'fast',
      max_tokens: 50,
      web_search_options: {},
      messages: [{ role: 'user', content: 'What happened today?' }],
    })
    .catch((e) => e)
  t.ok(e instanceof OpenAI.UnprocessableEntityError)
  t.equal(e.code, 'invalid_request')
  t.equal(e.param, 'web_search_options')
  t.match(e.message, /^422 web_search_options: a server tool's tokens cannot be bounded before the upstream call/)
  t.equal(openai.seen.length, 0, 'the upstream saw nothing')
  t.match(await spendOf(s, key), { spent: '0.000000', reserved: '0.000000' })
  t.equal(await used(s, key), 0)
  const tool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } } as const
  const chat = await openaiClient(s, key).chat.completions.create({
    model: 'fast',
    max_tokens: 50,
    tools: [tool],
    messages: [{ role: 'user', content: 'Weather?' }],
  })
  t.equal(chat.object, 'chat.completion')
  t.same(openai.seen[0].body.tools, [tool])
})

t.test('with a tokens-per-minute limit, a server tool is refused', async (t) => {
  const { s, anthropic } = await sdkUpstreams(t, dbEnv, 'anthropic')
  const key = await s.key()
  const r = await cli(['keys', 'limit', prefixOf(key), '--tokens-per-minute', '2000'])
  t.equal(r.code, 0, r.err.join('\n'))
  const e = await anthropicClient(s, key)
    .messages.create({ model: 'fast', max_tokens: 50, tools: [weather, webSearch], messages: hello })
    .catch((e) => e)
  t.ok(e instanceof Anthropic.UnprocessableEntityError)
  t.match(e.error.error.message, /^tools\[1\]: a server tool's .* this key has a tokens-per-minute limit;/)
  t.equal(anthropic.seen.length, 0)
})

t.test('with no budget or tokens-per-minute limit, server tools go through as sent', async (t) => {
  const { s, anthropic } = await sdkUpstreams(t, dbEnv, 'anthropic')
  const key = await s.key()
  const message = await anthropicClient(s, key).messages.create({
    model: 'fast',
    max_tokens: 50,
    tools: [weather, webSearch],
    messages: [{ role: 'user', content: [ask, upload] }],
  })
  t.same(message.content, [{ type: 'text', text: 'Hello' }])
  t.same(anthropic.seen[0].body.tools, [weather, webSearch])
  t.same(anthropic.seen[0].body.messages[0].content, [ask, upload])
  const { s: s2, openai } = await sdkUpstreams(t, dbEnv, 'openai')
  const chat = await openaiClient(s2, await s2.key()).chat.completions.create({
    model: 'fast',
    max_tokens: 50,
    web_search_options: { search_context_size: 'low' },
    messages: [{ role: 'user', content: 'What happened today?' }],
  })
  t.equal(chat.object, 'chat.completion')
  t.same(openai.seen[0].body.web_search_options, { search_context_size: 'low' })
})
