import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { prefixOf } from '../../src/accounts/key-format.js'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import type { TestServer } from '../support/server.js'
import { sdkUpstreams, used } from '../support/sdk-upstreams.js'
import type { Teardown } from '../support/teardown.js'

// A key limited to some model aliases, through both official SDKs: the aliases it may call answer, another is the
// SDK's PermissionDeniedError with our code model_not_allowed (before anything is spent or sent upstream), an alias
// nobody configured stays NotFound, /models lists what the key may call, and `all` lifts the limit. The native route
// refuses the same way in its own body.

const dbEnv = await testDatabase(t)
const ALIASES = 'coder=anthropic:claude-sonnet-4-5,openai:qwen2.5-coder:7b'
const hi = 'Say hello'

const serve = (t: Teardown) => sdkUpstreams(t, dbEnv, 'anthropic,openai', { STUDIO_MODEL_ALIASES: ALIASES })
const cli = cliOn({ ...dbEnv, STUDIO_MODEL_ALIASES: ALIASES })

const openai = (s: TestServer, apiKey: string) => new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey, maxRetries: 0 })
const anthropic = (s: TestServer, apiKey: string) => new Anthropic({ baseURL: `${s.url}/api`, apiKey, maxRetries: 0 })

const chat = (s: TestServer, key: string, model: string) =>
  openai(s, key).chat.completions.create({ model, messages: [{ role: 'user', content: hi }] })
const message = (s: TestServer, key: string, model: string) =>
  anthropic(s, key).messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: hi }] })

// A key of its own account limited to `models`.
const limitedKey = (s: TestServer, models: string[]) =>
  s.key({ email: `m${Math.random().toString(36).slice(2)}@example.com`, limits: { models } })

async function openaiIds(s: TestServer, key: string) {
  return (await openai(s, key).models.list()).data.map((m) => m.id)
}

async function anthropicIds(s: TestServer, key: string) {
  const ids: string[] = []
  for await (const m of anthropic(s, key).models.list()) ids.push(m.id)
  return ids
}

t.test('happy', async (t) => {
  t.test('a limited key calls the aliases it may, through each SDK', async (t) => {
    const { s } = await serve(t)
    const key = await limitedKey(s, ['fast', 'coder'])
    t.equal((await chat(s, key, 'coder')).model, 'coder')
    t.equal((await message(s, key, 'fast')).model, 'fast')
    await eventually(async () => (await used(s, key)) === 2, { what: 'both completions counted' })
  })

  t.test('/models lists only the aliases the key may call, in both shapes', async (t) => {
    const { s } = await serve(t)
    const key = await limitedKey(s, ['fast', 'coder'])
    t.same(await openaiIds(s, key), ['fast', 'coder'])
    t.same(await anthropicIds(s, key), ['fast', 'coder'])
    t.same(await openaiIds(s, await s.key()), ['primary', 'fast', 'coder'], 'a key with no limit: every alias')
  })

  t.test('`keys limit … --models all` lifts the limit on the running server', async (t) => {
    const { s } = await serve(t)
    const key = await limitedKey(s, ['fast'])
    t.ok((await chat(s, key, 'primary').catch((e) => e)) instanceof OpenAI.PermissionDeniedError)
    const lifted = await cli(['keys', 'limit', prefixOf(key), '--models', 'all'])
    t.equal(lifted.code, 0, lifted.err.join('\n'))
    await eventually(async () => (await openaiIds(s, key)).length === 3, { what: 'the limit lifted', interval: 200 })
    t.same(await openaiIds(s, key), ['primary', 'fast', 'coder'])
    t.equal((await chat(s, key, 'primary')).model, 'primary')
    t.equal((await message(s, key, 'coder')).model, 'coder')
  })

  t.test('the native route answers a limited key for an alias it may call', async (t) => {
    const { s } = await serve(t)
    const key = await limitedKey(s, ['fast'])
    const res = await s.fetch('/api/v1/ai/completions', {
      method: 'POST',
      key,
      json: { model: 'fast', messages: [{ role: 'user', content: hi }] },
    })
    t.equal(res.status, 200)
  })
})

t.test('errors', async (t) => {
  t.test('another alias: the OpenAI SDK raises PermissionDeniedError, code model_not_allowed', async (t) => {
    const { s, anthropic: up } = await serve(t)
    const key = await limitedKey(s, ['fast'])
    const e = await chat(s, key, 'coder').catch((e) => e)
    t.ok(e instanceof OpenAI.PermissionDeniedError, String(e))
    t.equal(e.status, 403)
    t.equal(e.code, 'model_not_allowed')
    t.equal(e.type, 'permission_error')
    t.match(e.message, 'may call fast')
    const streamed = await openai(s, key)
      .chat.completions.create({ model: 'primary', messages: [{ role: 'user', content: hi }], stream: true })
      .catch((e) => e)
    t.ok(streamed instanceof OpenAI.PermissionDeniedError, 'a stream is refused before it begins')
    t.equal(up.seen.length, 0, 'nothing reached an upstream')
    t.equal(await used(s, key), 0, 'nothing spent')
  })

  t.test('another alias: the Anthropic SDK raises PermissionDeniedError, code model_not_allowed', async (t) => {
    const { s, anthropic: up } = await serve(t)
    const key = await limitedKey(s, ['fast'])
    const e = await message(s, key, 'primary').catch((e) => e)
    t.ok(e instanceof Anthropic.PermissionDeniedError, String(e))
    t.equal(e.status, 403)
    t.equal(e.error.error.type, 'permission_error')
    t.equal(e.error.error.code, 'model_not_allowed')
    t.equal(up.seen.length, 0)
  })

  t.test('an alias nobody configured stays NotFound model_not_found, limited key or not', async (t) => {
    const { s } = await serve(t)
    const key = await limitedKey(s, ['fast'])
    const e = await chat(s, key, 'gpt-4o').catch((e) => e)
    t.ok(e instanceof OpenAI.NotFoundError)
    t.equal(e.code, 'model_not_found')
    const a = await message(s, key, 'claude-opus').catch((e) => e)
    t.ok(a instanceof Anthropic.NotFoundError)
    t.equal(a.error.error.code, 'model_not_found')
  })

  t.test('the native route refuses another alias in its own Error body', async (t) => {
    const { s, anthropic: up } = await serve(t)
    const key = await limitedKey(s, ['fast'])
    for (const json of [
      { messages: [{ role: 'user', content: hi }] },
      { model: 'primary', messages: [{ role: 'user', content: hi }], stream: true },
    ]) {
      const res = await s.fetch('/api/v1/ai/completions', { method: 'POST', key, json })
      t.equal(res.status, 403)
      t.match(res.headers.get('content-type'), /^application\/json/)
      const body = (await res.json()) as { error: { code: string; message: string } }
      t.equal(body.error.code, 'model_not_allowed')
      t.match(body.error.message, 'This key may not call the model "primary"')
    }
    t.equal(up.seen.length, 0)
  })
})

t.test('security', async (t) => {
  t.test('a limit set on a key holds for the key rotated from it', async (t) => {
    const { s } = await serve(t)
    const key = await limitedKey(s, ['coder'])
    const rotated = await cli(['keys', 'rotate', prefixOf(key), '--grace', '1h'])
    t.equal(rotated.code, 0, rotated.err.join('\n'))
    t.same(await openaiIds(s, rotated.key), ['coder'])
    const e = await message(s, rotated.key, 'fast').catch((e) => e)
    t.ok(e instanceof Anthropic.PermissionDeniedError)
  })

  t.test('a narrower limit reaches a running server within a poll', async (t) => {
    const { s } = await serve(t)
    const key = await s.key()
    t.equal((await chat(s, key, 'coder')).model, 'coder')
    t.equal((await cli(['keys', 'limit', prefixOf(key), '--models', 'fast'])).code, 0)
    const refused = async () => (await chat(s, key, 'coder').catch((e) => e)) instanceof OpenAI.PermissionDeniedError
    await eventually(refused, { what: 'the narrower limit applied', interval: 200 })
    t.same(await openaiIds(s, key), ['fast'])
  })
})
