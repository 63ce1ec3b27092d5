import t from 'tap'
import { anthropicMessage, anthropicStream, json, openaiStream, sse } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { sdkUpstreams } from '../support/sdk-upstreams.js'
import { eventually } from '../support/eventually.js'
import { cliOn } from '../support/cli.js'
import type { TestServer } from '../support/server.js'

// What a completion cost: the fake upstreams' usage times the price table, to the micro-dollar, recorded with the call
// (whole, streamed, cached, broken after tokens, after a fallback, left by its client, on the SDK-compatible routes),
// carried in `x-studio-cost-usd` and `cost_usd`, and null, never 0, for a model without a price.

const dbEnv = await testDatabase(t)
const ALIASES = 'local=anthropic:my-local-model,openai:my-local-model'
const { s, anthropic, openai } = await sdkUpstreams(t, dbEnv, 'anthropic,openai', {
  STUDIO_MODEL_ALIASES: ALIASES,
  STUDIO_UPSTREAM_TIMEOUT_MS: '5000',
})
const cli = cliOn({ ...dbEnv, STUDIO_MODEL_ALIASES: ALIASES })
const hello = { messages: [{ role: 'user', content: 'Say hello' }] }

// USD per million tokens (docs/spend.md) × tokens = micro-dollars, rounded once.
const SONNET = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
const GPT41 = { input: 2, output: 8, cache_read: 0.5, cache_write: 2 }
const cost = (p: typeof SONNET, input: number, output: number, read = 0, write = 0) =>
  Math.round(input * p.input + output * p.output + read * p.cache_read + write * p.cache_write)
// The fake upstreams' usage: anthropic 12 in, 5 out, 3 cache reads (1 out at message_start); openai 20 prompt of
// which 8 cached, 7 out.
const ANTHROPIC_COST = cost(SONNET, 12, 5, 3)
const MESSAGE_START_COST = cost(SONNET, 12, 1, 3)
const OPENAI_COST = cost(GPT41, 12, 7, 8)
const stream = (key: string, signal?: AbortSignal) =>
  s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { ...hello, stream: true }, signal })
const usd = (micros: number) => (micros / 1e6).toFixed(6)

async function row(s: TestServer, key: string) {
  const prefix = key.split('_')[1]
  return eventually(async () => (await s.db.sql`select * from completions where key_prefix = ${prefix}`)[0], {
    what: 'the completion recorded',
  })
}
const micros = (r: Record<string, unknown>) => (r.cost_micros === null ? null : Number(r.cost_micros))

t.beforeEach(() => {
  anthropic.reset()
  openai.reset()
})

t.test('a whole answer: header, body and record say usage × prices', async (t) => {
  t.equal(ANTHROPIC_COST, 112, '111.9 micro-dollars, rounded once')
  const key = await s.key()
  const res = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-studio-cost-usd'), usd(ANTHROPIC_COST))
  t.equal(((await res.json()) as any).cost_usd, '0.000112')
  const r = await row(s, key)
  t.match(r, { outcome: 'ok', upstream_model: 'claude-sonnet-4-5' })
  t.equal(micros(r), ANTHROPIC_COST)
})

t.test('cache reads and writes at their own prices', async (t) => {
  const usage = {
    input_tokens: 100,
    output_tokens: 50,
    cache_read_input_tokens: 1000,
    cache_creation_input_tokens: 200,
  }
  anthropic.next(json(200, anthropicMessage({ usage })))
  const key = await s.key()
  const res = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  const expected = cost(SONNET, 100, 50, 1000, 200)
  t.equal(expected, 300 + 750 + 300 + 750)
  t.equal(res.headers.get('x-studio-cost-usd'), usd(expected))
  t.equal(micros(await row(s, key)), expected)
})

t.test('a stream: the done event carries the cost the record holds', async (t) => {
  anthropic.next(sse(anthropicStream()))
  const key = await s.key()
  const res = await stream(key)
  const text = await res.text()
  const done = JSON.parse(text.split('event: done\ndata: ')[1])
  t.equal(done.cost_usd, usd(ANTHROPIC_COST))
  t.equal(micros(await row(s, key)), ANTHROPIC_COST)
})

t.test('a fallback: the upstream that answered, at its model price', async (t) => {
  anthropic.next(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))
  const key = await s.key()
  const res = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-studio-cost-usd'), usd(OPENAI_COST))
  const r = await row(s, key)
  t.match(r, { outcome: 'ok', upstream: 'openai', upstream_model: 'gpt-4.1', attempts: 2 })
  t.equal(micros(r), OPENAI_COST)
})

t.test('a stream that broke after tokens costs the tokens its upstream counted', async (t) => {
  const cut = Buffer.from(anthropicStream()).indexOf('event: content_block_stop')
  anthropic.next(sse(anthropicStream(), { after: cut, die: true }))
  const key = await s.key()
  const res = await stream(key)
  t.match(await res.text(), /event: error/)
  const r = await row(s, key)
  t.match(r, { outcome: 'upstream_unreachable', input_tokens: 12, output_tokens: 1 })
  t.equal(micros(r), MESSAGE_START_COST)
})

t.test('a stream its client left costs the tokens counted so far', async (t) => {
  let go = () => {}
  const gate = new Promise<void>((ok) => (go = ok))
  const cut = Buffer.from(anthropicStream()).indexOf('event: content_block_stop')
  anthropic.next(sse(anthropicStream(), { after: cut, pause: () => gate }))
  const key = await s.key()
  const abort = new AbortController()
  const res = await stream(key, abort.signal)
  const reader = res.body!.getReader()
  await reader.read()
  abort.abort()
  await eventually(() => anthropic.seen[0]?.aborted, { what: 'the upstream socket closed' })
  go()
  const r = await row(s, key)
  t.match(r, { outcome: 'client_closed', input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 3 })
  t.equal(micros(r), MESSAGE_START_COST)
})

t.test('the SDK-compatible routes: the header on whole answers, a last comment on streams', async (t) => {
  const key = await s.key()
  const messages = { model: 'primary', max_tokens: 100, ...hello }
  const m = await s.fetch('/api/v1/messages', { method: 'POST', key, json: messages })
  t.equal(m.status, 200)
  t.equal(m.headers.get('x-studio-cost-usd'), usd(ANTHROPIC_COST))
  anthropic.next(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))
  const c = await s.fetch('/api/v1/chat/completions', { method: 'POST', key, json: { model: 'primary', ...hello } })
  t.equal(c.status, 200)
  t.equal(c.headers.get('x-studio-cost-usd'), usd(OPENAI_COST))
  anthropic.next(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))
  openai.next(sse(openaiStream()))
  const streamed = await s.fetch('/api/v1/chat/completions', {
    method: 'POST',
    key,
    json: { model: 'primary', ...hello, stream: true, stream_options: { include_usage: true } },
  })
  const text = await streamed.text()
  t.ok(text.endsWith(`data: [DONE]\n\n: x-studio-cost-usd ${usd(OPENAI_COST)}\n\n`), text.slice(-120))
  const prefix = key.split('_')[1]
  const costs = await eventually(async () => {
    const r = await s.db.sql`select cost_micros from completions where key_prefix = ${prefix} order by id`
    return r.length === 3 && r.map(micros)
  })
  t.same(costs, [ANTHROPIC_COST, OPENAI_COST, OPENAI_COST])
})

t.test('a model without a price: null cost, no header, "no price" in the usage views', async (t) => {
  const key = await s.key()
  const res = await s.fetch('/api/v1/messages', {
    method: 'POST',
    key,
    json: { model: 'local', max_tokens: 100, ...hello },
  })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-studio-cost-usd'), null)
  const r = await row(s, key)
  t.match(r, { upstream_model: 'my-local-model', input_tokens: 12 })
  t.equal(r.cost_micros, null, 'null, not 0')
  const [{ account_id }] = await s.db.sql`select account_id from api_keys where prefix = ${key.split('_')[1]}`
  const usage = await cli(['usage'])
  t.equal(usage.code, 0, usage.err.join('\n'))
  const header = usage.out[0].split('\t')
  const line = usage.out.find((l) => l.startsWith(account_id))!.split('\t')
  t.equal(line[header.indexOf('COST_USD')], 'no price')
})

t.test('studio usage sums the priced calls in USD', async (t) => {
  const key = await s.key()
  for (let i = 0; i < 3; i++) await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  const prefix = key.split('_')[1]
  await eventually(async () => (await s.db.sql`select 1 from completions where key_prefix = ${prefix}`).length === 3)
  const [{ account_id }] = await s.db.sql`select account_id from api_keys where prefix = ${prefix}`
  const usage = await cli(['usage'])
  const header = usage.out[0].split('\t')
  const line = usage.out.find((l) => l.startsWith(account_id))!.split('\t')
  t.equal(line[header.indexOf('COST_USD')], usd(3 * ANTHROPIC_COST))
})

t.test("GET /me's spend: this month's cost of the account's calls, no budget", async (t) => {
  const key = await s.key()
  const me = async () => ((await (await s.fetch('/api/v1/me', { key })).json()) as any).spend
  const before = await me()
  t.match(before, { budget: null, spent: '0.000000', reserved: '0.000000', remaining: null })
  t.equal(new Date(before.resets_at).getUTCDate(), 1)
  await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  anthropic.next(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))
  await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: hello })
  const spent = usd(ANTHROPIC_COST + OPENAI_COST)
  t.equal(await eventually(async () => (await me()).spent === spent && spent, { what: 'spent' }), spent)
  const prefix = key.split('_')[1]
  const [row] = await s.db.sql`
    select s.spent_micros::text as spent from account_spend s join api_keys k using (account_id) where k.prefix = ${prefix}`
  t.equal(Number(row.spent), ANTHROPIC_COST + OPENAI_COST)
})
