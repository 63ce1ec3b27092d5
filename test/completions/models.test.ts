import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { parseConfig } from '../../src/ops/config.js'
import { anthropicMessage, fakeUpstream, json, openaiCompletion } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'
import type { Teardown } from '../support/teardown.js'

// GET /api/v1/models through both official SDKs, and the aliases of STUDIO_MODEL_ALIASES a call may name.

const dbEnv = await testDatabase(t)
const ALIASES =
  'coder=anthropic:claude-sonnet-4-5,openai:qwen2.5-coder:7b; mini=openai:gpt-4.1-mini,anthropic:claude-haiku-4-5'

async function serve(t: Teardown) {
  const anthropic = await fakeUpstream(
    t,
    json(529, { type: 'error', error: { type: 'overloaded_error', message: 'x' } })
  )
  const openai = await fakeUpstream(t, json(200, openaiCompletion()))
  const s = await startTestServer(
    t,
    {
      STUDIO_UPSTREAM: 'anthropic,openai',
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      STUDIO_MODEL_ALIASES: ALIASES,
    },
    { dbEnv, backoff: () => 1 }
  )
  return { s, anthropic, openai, key: await s.key() }
}

t.test('happy', async (t) => {
  t.test('the OpenAI SDK lists the aliases in its shape', async (t) => {
    const { s, key } = await serve(t)
    const page = await new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: key }).models.list()
    t.same(
      page.data.map((m) => [m.id, m.object]),
      [
        ['primary', 'model'],
        ['fast', 'model'],
        ['coder', 'model'],
        ['mini', 'model'],
      ]
    )
  })

  t.test('the Anthropic SDK lists them in its own', async (t) => {
    const { s, key } = await serve(t)
    const ids: string[] = []
    for await (const m of new Anthropic({ baseURL: `${s.url}/api`, apiKey: key }).models.list()) {
      t.equal(m.type, 'model')
      ids.push(m.id)
    }
    t.same(ids, ['primary', 'fast', 'coder', 'mini'])
  })

  t.test('the key in x-api-key alone, as the Anthropic Python SDK sends it, gets the Anthropic list', async (t) => {
    const { s, key } = await serve(t)
    const res = await fetch(`${s.url}/api/v1/models`, {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    })
    t.equal(res.status, 200)
    const body = (await res.json()) as { data: { id: string; type: string }[]; has_more: boolean }
    t.same(
      body.data.map((m) => [m.id, m.type]),
      [
        ['primary', 'model'],
        ['fast', 'model'],
        ['coder', 'model'],
        ['mini', 'model'],
      ]
    )
    t.equal(body.has_more, false)
  })

  t.test("an alias the operator named reaches each upstream's model for it, across a fallback", async (t) => {
    const { s, anthropic, openai, key } = await serve(t)
    anthropic.next(json(200, anthropicMessage({ content: [{ type: 'text', text: 'Hello' }] })))
    const sdk = new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: key, maxRetries: 0 })
    const first = await sdk.chat.completions.create({ model: 'coder', messages: [{ role: 'user', content: 'hi' }] })
    t.equal(first.model, 'coder')
    t.equal(anthropic.seen[0].body.model, 'claude-sonnet-4-5')
    await sdk.chat.completions.create({ model: 'coder', messages: [{ role: 'user', content: 'hi' }] })
    t.equal(openai.seen[0].body.model, 'qwen2.5-coder:7b')
  })
})

t.test('errors', async (t) => {
  t.test('an alias without a model for an upstream of the list stops the start', async (t) => {
    const env = {
      STUDIO_UPSTREAM: 'anthropic,openai',
      ANTHROPIC_API_KEY: 'k',
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
      STUDIO_MODEL_ALIASES: 'coder=anthropic:claude-sonnet-4-5',
    }
    t.throws(() => parseConfig(env), /must give coder a model for openai/)
    t.throws(() => parseConfig({ STUDIO_MODEL_ALIASES: 'fast=anthropic:x' }), /built-in/)
    t.throws(() => parseConfig({ STUDIO_MODEL_ALIASES: 'coder=google:gemini' }), /anthropic:model/)
    t.same(parseConfig({ STUDIO_MODEL_ALIASES: 'c=anthropic:a' }).STUDIO_MODEL_ALIASES, { c: { anthropic: 'a' } })
  })
})

t.test('security', async (t) => {
  t.test('the list takes a key with completions:write', async (t) => {
    const { s } = await serve(t)
    const e = await new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: 'sk_wrong', maxRetries: 0 }).models
      .list()
      .catch((e) => e)
    t.ok(e instanceof OpenAI.AuthenticationError)
    const leads = await s.key({ email: 'l@example.com', scopes: ['leads:write'] } as any)
    const denied = await new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: leads, maxRetries: 0 }).models
      .list()
      .catch((e) => e)
    t.ok(denied instanceof OpenAI.PermissionDeniedError)
  })
})
