import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import { json } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import type { TestServer } from '../support/server.js'
import { sdkUpstreams, used } from '../support/sdk-upstreams.js'
import type { Teardown } from '../support/teardown.js'

// POST /api/v1/messages/count_tokens driven by the official `@anthropic-ai/sdk`: counted by an Anthropic upstream,
// estimated (and marked so) for an OpenAI-compatible one, never a quota unit.

const dbEnv = await testDatabase(t)
const serve = (t: Teardown, upstream: string) => sdkUpstreams(t, dbEnv, upstream)
const client = (s: TestServer, apiKey: string) => new Anthropic({ baseURL: `${s.url}/api`, apiKey, maxRetries: 0 })

// 'Say hello' (9 bytes), 'Hello' (5), a tool `weather` (7) with its schema (57 bytes of JSON): 78 bytes, 20 tokens.
const tools: Anthropic.Tool[] = [
  { name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
]
const body = {
  model: 'fast',
  system: 'Hello',
  messages: [{ role: 'user' as const, content: 'Say hello' }],
  tools,
}

t.test('happy', async (t) => {
  t.test('an Anthropic upstream counts: the body goes to its count_tokens, the model rewritten', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    anthropic.next(json(200, { input_tokens: 42 }))
    const key = await s.key()
    const { data, response } = await client(s, key)
      .messages.countTokens({ ...body, cache_control: { type: 'ephemeral' } })
      .withResponse()
    t.same(data, { input_tokens: 42 })
    t.equal(response.headers.get('x-studio-token-estimate'), null)
    t.equal(anthropic.seen[0].path, '/v1/messages/count_tokens')
    t.same(anthropic.seen[0].body, { ...body, model: 'claude-haiku-4-5', cache_control: { type: 'ephemeral' } })
    t.equal(await used(s, key), 0, 'no quota unit')
  })

  t.test('an OpenAI-compatible upstream has no count: an estimate, marked, and no upstream call', async (t) => {
    const { s, openai } = await serve(t, 'openai')
    const key = await s.key()
    const { data, response } = await client(s, key).messages.countTokens(body).withResponse()
    t.same(data, { input_tokens: 20 })
    t.equal(response.headers.get('x-studio-token-estimate'), 'true')
    const image = { type: 'image' as const, source: { type: 'url' as const, url: 'https://example.com/a.png' } }
    const withImage = await client(s, key).messages.countTokens({
      model: 'fast',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, image] }],
    })
    t.same(withImage, { input_tokens: 4 + 1600 }, 'a quarter of the bytes, rounded up, and 1600 an image')
    t.equal(openai.seen.length, 0)
    t.equal(await used(s, key), 0)
  })

  t.test('the key may come in x-api-key', async (t) => {
    const { s } = await serve(t, 'openai')
    const sdk = new Anthropic({
      baseURL: `${s.url}/api`,
      apiKey: null,
      authToken: null,
      defaultHeaders: { 'x-api-key': await s.key() },
    })
    t.same(await sdk.messages.countTokens(body), { input_tokens: 20 })
  })
})

t.test('errors', async (t) => {
  t.test('an alias nobody configured is NotFound, before any upstream call', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const e = await client(s, await s.key())
      .messages.countTokens({ ...body, model: 'claude-x' })
      .catch((e) => e)
    t.ok(e instanceof Anthropic.NotFoundError)
    t.equal(e.error.error.code, 'model_not_found')
    t.equal(anthropic.seen.length, 0)
  })

  t.test('what POST /messages would refuse for the alias is refused here too', async (t) => {
    const { s } = await serve(t, 'openai')
    const e = await client(s, await s.key())
      .messages.countTokens({ ...body, thinking: { type: 'enabled', budget_tokens: 1024 } })
      .catch((e) => e)
    t.ok(e instanceof Anthropic.BadRequestError)
    t.match(e.message, /thinking/)
  })

  t.test("the upstream's overload is Anthropic's 529, which the SDK retries", async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const overloaded = json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
    anthropic.next(overloaded, overloaded, overloaded, json(200, { input_tokens: 7 }))
    const sdk = new Anthropic({ baseURL: `${s.url}/api`, apiKey: await s.key(), maxRetries: 1 })
    t.same(await sdk.messages.countTokens(body), { input_tokens: 7 })
    t.equal(anthropic.seen.length, 4, 'three attempts of ours, then the SDK retried')
  })
})

t.test('security', async (t) => {
  t.test('a wrong key is the SDK AuthenticationError, and nothing reaches the upstream', async (t) => {
    const { s, anthropic } = await serve(t, 'anthropic')
    const e = await client(s, 'sk_wrong')
      .messages.countTokens(body)
      .catch((e) => e)
    t.ok(e instanceof Anthropic.AuthenticationError)
    t.equal(e.error.error.code, 'unauthorized')
    t.equal(anthropic.seen.length, 0)
  })

  t.test('a key without completions:write is PermissionDenied', async (t) => {
    const { s } = await serve(t, 'anthropic')
    const key = await s.key({ email: 'leads@example.com', scopes: ['leads:write'] } as any)
    const e = await client(s, key)
      .messages.countTokens(body)
      .catch((e) => e)
    t.ok(e instanceof Anthropic.PermissionDeniedError)
  })
})
