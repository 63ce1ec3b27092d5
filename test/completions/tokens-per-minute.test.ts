import t, { type Test } from 'tap'
import { prefixOf } from '../../src/accounts/key-format.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { testDatabase } from '../support/database.js'
import { cliOn } from '../support/cli.js'
import { spawnServer } from '../support/processes.js'
import { startTestServer } from '../support/server.js'
import { redisSkip, testRedis, uniquePrefix } from '../support/redis.js'

// A key's tokens per minute: each call reserves its upper bound of tokens (its body's bytes plus max_tokens) before
// the upstream is called and settles to what the upstream said it used (cache reads not counted); what does not fit
// is refused with 429 rate_limited and Retry-After, and two processes sharing Redis hold one window between them.

const dbEnv = await testDatabase(t)
const cli = cliOn(dbEnv)
const MAX = 1000
const body = { messages: [{ role: 'user', content: 'hi' }], max_tokens: MAX }
const BOUND = Buffer.byteLength(JSON.stringify(body)) + MAX
// Each call used 12 input tokens, 30 cache writes, all its max_tokens, and 500 cache reads (not counted).
const usage = { input_tokens: 12, output_tokens: MAX, cache_read_input_tokens: 500, cache_creation_input_tokens: 30 }
const USED = 12 + 30 + MAX
// Fits 4 reservations, and not a fifth once those four have settled (5000 - 4 × USED < BOUND); two processes each
// with a window of its own would answer 8.
const LIMIT = 5000
const FITS = Math.floor(LIMIT / BOUND)
const post = (url: string, key: string, json: object = body) =>
  fetch(`${url}/api/v1/ai/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  })

async function server(t: Test, extra: Record<string, string> = {}) {
  const answer = json(200, anthropicMessage({ usage }))
  const upstream = await fakeUpstream(t, (req, res, seen) => setTimeout(() => answer(req, res, seen), 100))
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_DB_TIMEOUT_MS: '60000',
    ...extra,
  }
  const a = await startTestServer(t, env, { dbEnv })
  return { upstream, a, env }
}

async function limitedKey(a: Awaited<ReturnType<typeof server>>['a'], limit: number) {
  const key = await a.key({ email: `tpm-${Math.random().toString(36).slice(2)}@example.com` })
  const r = await cli(['keys', 'limit', prefixOf(key), '--tokens-per-minute', String(limit)])
  t.equal(r.code, 0, r.err.join('\n'))
  t.match(r.out.join('\n'), `tokens per minute ${limit}`)
  return key
}

// 30 calls at once, spread over `urls`: each answer's status, Retry-After and error code.
const burst = (urls: string[], key: string) =>
  Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      post(urls[i % urls.length], key).then(async (r) => ({
        status: r.status,
        retryAfter: r.headers.get('retry-after'),
        code: r.status === 200 ? null : ((await r.json()) as any).error.code,
      }))
    )
  )

function holds(t: Test, got: Awaited<ReturnType<typeof burst>>, seen: number) {
  const answered = got.filter((g) => g.status === 200).length
  t.equal(answered, FITS, 'exactly the calls whose reservations fit')
  t.ok(answered * USED <= LIMIT, 'the tokens used stay within the limit')
  t.equal(seen, answered, 'the refused calls never reached the upstream')
  for (const g of got.filter((g) => g.status !== 200)) {
    t.equal(g.status, 429)
    t.equal(g.code, 'rate_limited')
    t.ok(Number(g.retryAfter) >= 1 && Number(g.retryAfter) <= 60, 'Retry-After within the window')
  }
}

t.test('30 concurrent calls against a small limit: the reservations that fit, the rest 429', async (t) => {
  const { upstream, a } = await server(t)
  const key = await limitedKey(a, LIMIT)
  holds(t, await burst([a.url], key), upstream.seen.length)
})

t.test('a call larger than the whole limit, or without max_tokens, is refused with a clear error', async (t) => {
  const { upstream, a } = await server(t)
  const key = await limitedKey(a, 500)
  const big = await post(a.url, key)
  t.equal(big.status, 422)
  t.match(((await big.json()) as any).error.message, /more than this key's limit of 500 tokens per minute/)
  const small = await post(a.url, key, { ...body, max_tokens: 100 })
  t.equal(small.status, 200, 'a call that fits')
  t.equal(upstream.seen.length, 1)
})

t.test('settled to what was used: the room the bound did not use is given back', async (t) => {
  const { a } = await server(t)
  // Room for one reservation and not two; once the first settles to USED, the rest fits a second.
  const key = await limitedKey(a, USED + BOUND)
  t.equal((await post(a.url, key)).status, 200)
  t.equal((await post(a.url, key)).status, 200, 'the first settled to its usage')
  const third = await post(a.url, key)
  t.equal(third.status, 429)
  t.ok(Number(third.headers.get('retry-after')) >= 1)
})

t.test('keys limit: none lifts it; a bad value is one line, exit 2', async (t) => {
  const { a } = await server(t)
  const key = await limitedKey(a, 100)
  const bad = await cli(['keys', 'limit', prefixOf(key), '--tokens-per-minute', '0'])
  t.equal(bad.code, 2)
  t.match(bad.err.join('\n'), '--tokens-per-minute: expected a whole number of at least 1, or none')
  const lifted = await cli(['keys', 'limit', prefixOf(key), '--tokens-per-minute', 'none'])
  t.equal(lifted.code, 0)
  t.notMatch(lifted.out.join('\n'), 'tokens per minute')
  const [row] = await a.db.sql`select tokens_per_minute from api_keys where prefix = ${prefixOf(key)}`
  t.equal(row.tokens_per_minute, null)
})

t.test('two processes over one Redis share the window', { skip: redisSkip(t) }, async (t) => {
  const shared = {
    STUDIO_REDIS_URL: await testRedis(t),
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    STUDIO_REDIS_TIMEOUT_MS: '1000',
  }
  const { upstream, a, env } = await server(t, shared)
  const b = await spawnServer(t, { ...dbEnv, ...env })
  const key = await limitedKey(a, LIMIT)
  holds(t, await burst([a.url, b.url], key), upstream.seen.length)
})
