import { execFile } from 'node:child_process'
import { Agent, request } from 'node:http'
import { promisify } from 'node:util'
import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { checksumOf, generateKey } from '../../src/accounts/key-format.js'
import { FROM_SOURCE } from '../support/processes.js'
import { issueKey, issuedKeys, logLines, startTestServer } from '../support/server.js'
import { head, rawRequest } from '../support/raw.js'

const s = await startTestServer(t)
const sql = s.db.sql
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
t.teardown(() => agent.destroy())

// A well-formed key (valid checksum) for `prefix` with a secret that is not its own.
const wrongSecretFor = (prefix: string) => {
  const body = `studio_${prefix}_${generateKey().key.split('_')[2].slice(0, 22)}`
  return body + checksumOf(body)
}

// One request over a kept-alive connection, timed from write to the end of the answer.
function timed(key: string): Promise<{ status: number; ms: number }> {
  return new Promise((ok, fail) => {
    const started = performance.now()
    const req = request(
      { host: '127.0.0.1', port: s.port, path: '/api/v1/me', agent, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        res.resume().on('end', () => ok({ status: res.statusCode!, ms: performance.now() - started }))
      }
    )
    req.on('error', fail).end()
  })
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

// Whether a prefix exists must not show in how long its 401 takes. Two measures, interleaved so that the machine's
// noise falls on both alike, compared by their medians within a generous factor (never an absolute duration).
t.test('the timing of a 401 does not tell whether the prefix exists', async (t) => {
  const known = await issueKey(sql, { email: 'timing@example.com' })
  const wrong = wrongSecretFor(known.split('_')[1])
  const unknown = generateKey().key
  // Repeated: the same unknown prefix and the same known prefix with a wrong secret (both cached after the first).
  const a: number[] = []
  const b: number[] = []
  for (let i = 0; i < 30; i++) await timed(i % 2 ? wrong : unknown) // warm up
  const statuses = new Set<number>()
  for (let i = 0; i < 300; i++) {
    for (const k of i % 2 ? [unknown, wrong] : [wrong, unknown]) {
      const r = await timed(k)
      statuses.add(r.status)
      ;(k === unknown ? a : b).push(r.ms)
    }
  }
  t.same([...statuses], [401])
  const [ma, mb] = [median(a), median(b)]
  t.comment(
    `repeated: unknown prefix ${ma.toFixed(3)} ms, known prefix with a wrong secret ${mb.toFixed(3)} ms (medians)`
  )
  t.ok(Math.max(ma, mb) / Math.min(ma, mb) < 2, 'medians within a factor of 2')

  // First sight: prefixes the server has not seen yet, that exist or do not (each costs one database read).
  const fresh = await Promise.all(
    Array.from({ length: 40 }, (_, i) => issueKey(sql, { email: `fresh${i}@example.com` }))
  )
  const c: number[] = []
  const d: number[] = []
  for (const k of fresh) {
    const u = await timed(generateKey().key)
    const w = await timed(wrongSecretFor(k.split('_')[1]))
    t.equal(u.status + w.status, 802)
    c.push(u.ms)
    d.push(w.ms)
  }
  const [mc, md] = [median(c), median(d)]
  t.comment(
    `first sight: unknown prefix ${mc.toFixed(3)} ms, known prefix with a wrong secret ${md.toFixed(3)} ms (medians)`
  )
  t.ok(Math.max(mc, md) / Math.min(mc, md) < 2, 'medians within a factor of 2')
})

t.test('no key reaches a log: a varied workload, then every log line is searched', async (t) => {
  const key = await issueKey(sql, { email: 'leak@example.com', name: 'Leak' })
  const lonely = await issueKey(sql, { plan: 'PRO' })
  const revoked = await issueKey(sql, { email: 'leak@example.com' })
  await sql`update api_keys set revoked_at = now(), updated_at = now() where prefix = ${revoked.split('_')[1]}`
  const expired = await issueKey(sql, { email: 'leak@example.com', expiresAt: new Date(Date.now() - 1000) })
  const lead = { name: 'L', email: 'l@example.com', service: 's', message: 'm' }
  const calls: [string, RequestInit & { key?: string; json?: unknown }][] = [
    ['/api/v1/me', { key }],
    ['/api/v1/me', { key: lonely }],
    ['/api/v1/me', { key: revoked }],
    ['/api/v1/me', { key: expired }],
    ['/api/v1/me', { key: wrongSecretFor(key.split('_')[1]) }],
    ['/api/v1/me', { key: key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a') }],
    ['/api/v1/me', { headers: { authorization: key } }],
    ['/api/v1/me', { key, headers: { 'x-request-id': key } }],
    [`/api/v1/me?api_key=${key}`, {}],
    [`/api/v1/${key}`, { key }],
    ['/api/v1/openapi.json', { key: lonely }],
    ['/api/v1/leads', { method: 'POST', key, json: lead }],
    ['/api/v1/leads', { method: 'POST', key, json: lead, headers: { 'idempotency-key': key } }],
    ['/api/v1/leads', { method: 'POST', key, json: lead, headers: { 'idempotency-key': key } }],
    [
      '/api/v1/leads',
      { method: 'POST', key, json: { ...lead, message: 'other' }, headers: { 'idempotency-key': key } },
    ],
    ['/api/v1/leads', { method: 'POST', key, json: { ...lead, secret: key } }],
    [
      '/api/v1/leads',
      { method: 'POST', key, body: `{"key":"${key}"`, headers: { 'content-type': 'application/json' } },
    ],
    ['/api/v1/leads', { method: 'POST', key, body: key, headers: { 'content-type': key } }],
    ['/api/v1/me', { method: 'DELETE', key }],
  ]
  for (const [path, init] of calls) {
    const r = await s.fetch(path, init)
    t.ok(r.status < 500, `${init.method ?? 'GET'} ${path.slice(0, 30)} → ${r.status}`)
    await r.arrayBuffer()
  }
  for (const bytes of [
    head('GET', '/api/v1/me', { authorization: `Bearer ${key}`, 'x-pad': 'p'.repeat(20_000) }),
    `GET /api/v1/me HTTP/1.1\r\nauthorization: Bearer ${key}\r\nbroken header ${key}\r\n\r\n`,
    `${key} / HTTP/1.1\r\n\r\n`,
  ]) {
    t.ok((await rawRequest(s.port, bytes)).status >= 400)
  }
  // The CLI in this process: keys create prints its key on stdout by design (and nowhere else); list and revoke never.
  const out: string[] = []
  const err: string[] = []
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }
  const env = s.dbEnv
  t.equal(await run(['keys', 'create', '--email', 'cli-leak@example.com'], env, io), 0)
  const cliKey = out.at(-1)!
  issuedKeys.push(cliKey)
  out.length = 0
  t.equal(await run(['keys', 'list'], env, io), 0)
  t.equal(await run(['keys', 'revoke', cliKey.split('_')[1]], env, io), 0)
  t.equal(await run(['keys', 'revoke', cliKey], env, io), 2)
  // And a CLI process of its own.
  const child = await promisify(execFile)(process.execPath, [...FROM_SOURCE, 'keys', 'list'], {
    env: { PATH: process.env.PATH, ...env },
  })
  const logged = [...logLines, ...out, ...err, child.stdout, child.stderr].join('\n')
  t.ok(logLines.length >= 3, `${logLines.length} log lines searched`)
  t.match(logged, /"level":"debug"/, 'debug lines included')
  for (const k of issuedKeys) {
    t.notOk(logged.includes(k), 'no key')
    t.notOk(logged.includes(k.split('_')[2]), 'no secret')
    t.notOk(logged.includes(k.split('_')[2].slice(0, 22)), 'no secret without its checksum')
  }
})
