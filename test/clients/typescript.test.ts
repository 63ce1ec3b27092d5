import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import t, { type Test } from 'tap'
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  InvalidRequestError,
  PermissionDeniedError,
  QuotaExceededError,
  RateLimitError,
  ServerError,
  Studio,
  StudioError,
} from '../../clients/typescript/src/index.js'
import { clientServers, QUOTA } from '../support/client-servers.js'
import { webhookVectors } from '../support/webhook-vectors.js'

const exec = promisify(execFile)
const s = await clientServers(t)
const apiKey = await s.key('ts-client@example.com')
const client = new Studio({ apiKey, baseURL: s.baseURL })
const hello = { messages: [{ role: 'user' as const, content: 'Hi' }] }
const lead = { name: 'Ada', email: 'ada@example.com', service: 'web', message: 'Hello' }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

// Every fetch the client makes, for counting attempts and reading the headers it sent.
const counted = () => {
  const calls: { url: string; headers: Record<string, string> }[] = []
  const f: typeof fetch = (input, init) => {
    calls.push({ url: String(input), headers: init?.headers as Record<string, string> })
    return fetch(input, init)
  }
  return { calls, fetch: f }
}

async function rejects<E extends StudioError>(t: Test, p: PromiseLike<unknown>, kind: new (...a: never[]) => E) {
  try {
    await p
  } catch (e) {
    t.type(e, kind, kind.name)
    return e as E
  }
  throw new Error(`expected ${kind.name}`)
}

t.test('every method, each result with its request id', async (t) => {
  const me = await client.me()
  t.match(me, { user: { email: 'ts-client@example.com' }, plan: 'FREE', quota: { limit: QUOTA } })
  t.match(me._request_id, /\S/)
  t.notOk(Object.keys(me).includes('_request_id'), '_request_id is not enumerable')
  const c = await client.completions.create({ ...hello, model: 'fast', max_tokens: 50 })
  t.equal(c.content, 'Hello, world')
  t.match(c._request_id, /\S/)
  const l = await client.leads.create(lead)
  t.match(l, { id: UUID, createdAt: /^\d{4}-/ })
  const doc = await client.openapi()
  t.equal(doc.openapi, '3.1.0')
  const raw = await client.completions.create(hello).withResponse()
  t.equal(raw.response.status, 200)
  t.equal(raw.requestId, raw.data._request_id)
  t.match(raw.response.headers.get('ratelimit'), /r=\d+/)
  t.match(raw.response.headers.get('server-timing'), /total;dur=/)
  t.equal((await client.me().asResponse()).status, 200)
})

t.test('leads.list() iterates over pages, leads.get() reads one', async (t) => {
  const reader = new Studio({ apiKey: await s.key('ts-leads@example.com'), baseURL: s.baseURL })
  const ids: string[] = []
  for (let i = 0; i < 5; i++) ids.unshift((await reader.leads.create({ ...lead, name: `Lead ${i}` })).id)
  const pages = []
  for await (const page of reader.leads.list({ limit: 2 })) pages.push(page)
  t.same(
    pages.map((p) => p.leads.length),
    [2, 2, 1]
  )
  t.same(
    pages.flatMap((p) => p.leads.map((l) => l.id)),
    ids,
    'each lead once, newest first'
  )
  t.match(pages[0]._request_id, /\S/)
  t.equal(pages[2].next_cursor, null)
  const one = await reader.leads.get(ids[0])
  t.match(one, { id: ids[0], name: 'Lead 4', status: 'new', assignee: null, spam: false })
  await rejects(t, reader.leads.get('00000000-0000-4000-8000-000000000000'), StudioError)
  const won = await reader.leads.update(ids[1], { status: 'won' })
  t.match(won, { id: ids[1], status: 'won', assignee: null })
  t.match(won._request_id, /\S/)
  const note = await reader.leads.addNote(ids[1], 'Called')
  t.match(note, { text: 'Called', authorKind: 'key' })
  t.same(
    (await reader.leads.get(ids[1])).notes.map((n) => n.text),
    ['Called']
  )
  const filtered = reader.leads.list({ status: 'lost' })[Symbol.asyncIterator]()
  t.same((await filtered.next()).value?.leads, [], 'a filter reaches the server')
})

t.test('each error class from a real response, with code, details and request id', async (t) => {
  const bad = new Studio({ apiKey: `${apiKey}x`, baseURL: s.baseURL })
  const auth = await rejects(t, bad.me(), AuthenticationError)
  t.match(auth, { status: 401, code: 'unauthorized', requestId: /\S/ })
  t.match(auth.headers.get('www-authenticate'), 'invalid_token')
  const invalid = await rejects(t, client.completions.create({ ...hello, max_tokens: 0 }), InvalidRequestError)
  t.match(invalid, { status: 422, code: 'invalid_request', requestId: /\S/ })
  t.match(invalid.issues, [{ path: 'max_tokens' }])
  const scoped = counted()
  const leadsOnly = await s.key('ts-scoped@example.com', ['--scopes', 'leads:write'])
  const narrow = new Studio({ apiKey: leadsOnly, baseURL: s.baseURL, fetch: scoped.fetch })
  const denied = await rejects(t, narrow.me(), PermissionDeniedError)
  t.match(denied, { status: 403, code: 'forbidden', requiredScope: 'me:read', requestId: /\S/ })
  t.equal(scoped.calls.length, 1, 'forbidden is never retried')
  t.match(await narrow.leads.create(lead), { id: UUID }, 'the key still does what its scope allows')
  const { calls, fetch } = counted()
  const quota = new Studio({ apiKey: await s.key('ts-quota@example.com'), baseURL: s.baseURL, fetch })
  for (let i = 0; i < QUOTA; i++) await quota.completions.create(hello)
  const over = await rejects(t, quota.completions.create(hello), QuotaExceededError)
  t.match(over, { status: 429, code: 'quota_exceeded', limit: QUOTA, used: QUOTA, resetsAt: /^\d{4}-/ })
  t.equal(calls.length, QUOTA + 1, 'quota_exceeded is never retried')
  const capped = counted()
  const keyCap = await s.key('ts-keycap@example.com', ['--monthly-completions', '1'])
  const one = new Studio({ apiKey: keyCap, baseURL: s.baseURL, fetch: capped.fetch })
  await one.completions.create(hello)
  const cap = await rejects(t, one.completions.create(hello), QuotaExceededError)
  t.match(cap, { status: 429, code: 'key_quota_exceeded', limit: 1, used: 1, resetsAt: /^\d{4}-/ })
  t.equal(capped.calls.length, 2, 'key_quota_exceeded is never retried')
  const server = await rejects(t, client.completions.create(flaky(), { maxRetries: 0 }), ServerError)
  t.match(server, { status: 503, code: 'upstream_unavailable', requestId: /\S/ })
  const limited = new Studio({ apiKey: await s.warpKey(), baseURL: s.warpURL, maxRetries: 0 })
  await limited.me()
  await limited.me()
  const rate = await rejects(t, limited.me(), RateLimitError)
  t.match(rate, { status: 429, code: 'rate_limited' })
  t.ok(rate.retryAfter! > 0)
})

let flakes = 0
const flaky = () => ({ messages: [{ role: 'user' as const, content: `flaky: ${++flakes} ${Math.random()}` }] })

t.test('retries: after an upstream 503, after a 429 honouring Retry-After', async (t) => {
  const { calls, fetch } = counted()
  const c = new Studio({ apiKey, baseURL: s.baseURL, fetch })
  t.equal((await c.completions.create(flaky())).content, 'Hello, world')
  t.equal(calls.length, 2, 'one retry after the 503')
  const w = counted()
  const limited = new Studio({ apiKey: await s.warpKey(), baseURL: s.warpURL, fetch: w.fetch })
  await limited.me()
  await fetch(s.controlURL, { method: 'POST' })
  await limited.me()
  const third = await limited.me().withResponse()
  t.equal(third.response.status, 200)
  t.equal(w.calls.length, 4, 'the third call was refused once, then answered after Retry-After')
})

t.test('connection refused, a timeout, an abort', async (t) => {
  const { calls, fetch } = counted()
  const down = new Studio({ apiKey, baseURL: s.refusedURL, fetch })
  await rejects(t, down.me(), APIConnectionError)
  t.equal(calls.length, 3, 'the first attempt and two retries')
  const silent = new Studio({ apiKey, baseURL: s.silentURL, timeout: 200, maxRetries: 0 })
  const slow = await rejects(t, silent.me(), APITimeoutError)
  t.equal(slow.status, undefined)
  t.type(slow, APIConnectionError, 'a timeout is a connection error')
  const controller = new AbortController()
  const pending = silent.me({ signal: controller.signal, timeout: 60_000 })
  setTimeout(() => controller.abort(), 50)
  await rejects(t, pending, APIUserAbortError)
})

t.test('a lead is created once when the first response is lost', async (t) => {
  const { calls, fetch } = counted()
  const c = new Studio({ apiKey, baseURL: s.proxyURL, fetch })
  const first = await c.leads.create(lead).withResponse()
  t.equal(first.response.status, 201)
  t.equal(first.response.headers.get('idempotent-replayed'), 'true', 'the retry got the first request’s lead')
  t.equal(calls.length, 2)
  t.match(calls[0].headers['idempotency-key'], UUID)
  t.equal(calls[1].headers['idempotency-key'], calls[0].headers['idempotency-key'], 'one key for every attempt')
  const again = await c.leads.create(lead, { idempotencyKey: 'mine-1' }).withResponse()
  t.equal(again.response.headers.get('idempotent-replayed'), 'true')
  const repeat = await client.leads.create(lead, { idempotencyKey: 'mine-1' })
  t.equal(repeat.id, again.data.id, 'the caller’s key: the same lead')
})

t.test('the bundle: under 15 KB minified, no dependencies', async (t) => {
  const out = await build({
    entryPoints: [new URL('../../clients/typescript/src/index.ts', import.meta.url).pathname],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
  })
  t.ok(out.outputFiles[0].contents.length < 15 * 1024, `${out.outputFiles[0].contents.length} bytes`)
  const pkg = JSON.parse(readFileSync(new URL('../../clients/typescript/package.json', import.meta.url), 'utf8'))
  t.same(pkg.dependencies ?? {}, {})
})

t.test('a clean install: npm pack, installed into an empty directory, used from a plain .mjs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'studio-client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const pkgDir = new URL('../../clients/typescript/', import.meta.url).pathname
  const { stdout } = await exec('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: pkgDir })
  const tarball = join(dir, stdout.trim().split('\n').at(-1)!)
  const app = join(dir, 'app')
  await exec('mkdir', ['-p', app])
  writeFileSync(join(app, 'package.json'), '{"name":"app","private":true,"type":"module"}')
  await exec('npm', ['install', '--no-fund', '--no-audit', '--offline', tarball], { cwd: app })
  writeFileSync(
    join(app, 'main.mjs'),
    `import { Studio, AuthenticationError, verifyWebhook } from 'studio-api-client'
const client = new Studio()
const me = await client.me()
const lead = await client.leads.create({ name: 'A', email: 'a@example.com', service: 's', message: 'm' })
let kind = ''
try { await new Studio({ apiKey: 'nope' }).me() } catch (e) { kind = e instanceof AuthenticationError ? 'auth' : 'other' }
const delivery = JSON.parse(process.env.DELIVERY)
const event = verifyWebhook(delivery.body, delivery.headers, delivery.secret).type
console.log(JSON.stringify({ plan: me.plan, lead: lead.id, id: me._request_id, kind, event }))
`
  )
  const run = await exec(process.execPath, ['main.mjs'], {
    cwd: app,
    env: {
      PATH: process.env.PATH,
      STUDIO_API_KEY: apiKey,
      STUDIO_BASE_URL: s.baseURL,
      DELIVERY: JSON.stringify(webhookVectors()[0]),
    },
  })
  t.match(JSON.parse(run.stdout), { plan: 'FREE', lead: UUID, id: /\S/, kind: 'auth', event: 'lead.created' })
})
