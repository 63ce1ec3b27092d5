import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { issueKey, startTestServer } from '../support/server.js'
import { errorCode, head, rawRequest } from '../support/raw.js'
import { eventually } from '../support/eventually.js'

// Hostile input: every case gets the Error body with the right status, the server stays up, nothing is half-written.

const s = await startTestServer(t)
const sql = s.db.sql
const key = await issueKey(sql, { email: 'hostile@example.com' })
const other = await issueKey(sql, { email: 'other@example.com' })
const auth = `Bearer ${key}`
const lead = { name: 'Ann', email: 'ann@example.com', service: 'audit', message: 'Hello' }
// Another server (other settings) over the same database.
const sameDb = { db: s.db, dbEnv: s.dbEnv }
const leads = async () => (await sql<{ n: number }[]>`select count(*)::int as n from leads`)[0].n

async function post(body: string | Buffer, headers: Record<string, string> = {}) {
  const r = await s.fetch('/api/v1/leads', {
    method: 'POST',
    body,
    headers: { authorization: auth, 'content-type': 'application/json', ...headers },
  })
  const text = await r.text()
  return {
    status: r.status,
    text,
    json: JSON.parse(text) as { error: { code: string; message: string; details?: any } },
  }
}

// Sends `body` and expects a 422 with `code`, nothing stored, an answer of modest size whatever the input's size.
async function refused(t: Test, body: string | Buffer, code: string, message?: RegExp) {
  const before = await leads()
  const r = await post(body)
  t.equal(r.status, 422, `${String(body).slice(0, 60)} → 422`)
  t.equal(r.json.error.code, code)
  if (message) t.match(r.json.error.message, message)
  t.ok(r.text.length < 20_000, `the answer is small (${r.text.length} bytes)`)
  t.equal(await leads(), before, 'nothing stored')
  return r.json.error
}

t.test('duplicate keys are refused, naming the key', async (t) => {
  const e = await refused(
    t,
    '{"name":"a","email":"a@example.com","service":"s","message":"m","name":"b"}',
    'invalid_json',
    /repeats the key "name"/
  )
  t.same(e.details, { key: 'name' })
  await refused(
    t,
    '{"name":"a","email":"a@example.com","service":"s","message":"m","utm":{"source":"x","source":"y"}}',
    'invalid_json',
    /"source"/
  )
  await refused(
    t,
    '{"name":"a","n\\u0061me":"b","email":"a@example.com","service":"s","message":"m"}',
    'invalid_json',
    /"name"/
  )
  const long = 'k'.repeat(5000)
  const big = await refused(t, `{"${long}":1,"${long}":2}`, 'invalid_json')
  t.ok(big.message.length < 300, 'the key is quoted clipped')
})

t.test('equal keys in different objects, and look-alikes inside strings, are fine', async (t) => {
  const before = await leads()
  const ok = await post(
    '{"name":"a","email":"a@example.com","service":"s","source":"x","message":"m \\"name\\": {\\"x\\":1,\\"x\\":2} [[[","utm":{"source":"y"}}'
  )
  t.equal(ok.status, 201, ok.text)
  t.equal(await leads(), before + 1)
})

t.test('deep nesting is refused cheaply and the process survives', async (t) => {
  const nest = (n: number) => '['.repeat(n) + ']'.repeat(n)
  await refused(t, `{"name":${nest(65)}}`, 'invalid_json', /deeper than 64/)
  await refused(t, nest(100_000), 'invalid_json', /deeper than 64/)
  await refused(t, `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, 'invalid_json', /deeper than 64/)
  const e = await refused(t, JSON.stringify({ ...lead, name: 0 }).replace('0', nest(63)), 'invalid_request', /^name: /)
  t.match(
    e.details.issues,
    [{ path: 'name', message: /string/ }],
    '63 levels below the top: parsed, then refused by the schema'
  )
  t.equal((await s.fetch('/healthz')).status, 200)
})

t.test('__proto__ and constructor are unknown fields, and Object.prototype stays untouched', async (t) => {
  const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort()
  const base = JSON.stringify(lead).slice(0, -1)
  for (const [extra, path] of [
    ['"__proto__":{"polluted":"yes"}', '__proto__'],
    ['"constructor":{"prototype":{"polluted":"yes"}}', 'constructor'],
    ['"utm":{"__proto__":{"polluted":"yes"}}', 'utm.__proto__'],
    ['"toString":"x"', 'toString'],
  ]) {
    const e = await refused(t, `${base},${extra}}`, 'invalid_request')
    t.ok(
      e.details.issues.some(
        (i: { path: string; message: string }) => i.path === path && i.message === 'is not a known field'
      ),
      `${path}: ${JSON.stringify(e.details)}`
    )
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.same(Object.getOwnPropertyNames(Object.prototype).sort(), protoBefore)
})

t.test('NUL characters, lone surrogates and invalid UTF-8', async (t) => {
  await refused(t, JSON.stringify({ ...lead, name: 'a\u0000b' }), 'invalid_request', /NUL/)
  await refused(t, JSON.stringify(lead).replace('"Hello"', '"a\u0000b"'), 'invalid_json') // a raw control character
  await refused(t, JSON.stringify(lead).replace('"Hello"', '"a\\ud800b"'), 'invalid_request', /surrogate/)
  await refused(t, JSON.stringify(lead).replace('"Hello"', '"\\udfff"'), 'invalid_request', /surrogate/)
  await refused(t, `{"\\ud800":1}`, 'invalid_request')
  const bytes = (b: number[]) =>
    Buffer.concat([Buffer.from(JSON.stringify(lead).slice(0, -2)), Buffer.from(b), Buffer.from('"}')])
  for (const b of [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
    await refused(t, bytes(b), 'invalid_json', /UTF-8/)
  }
})

t.test('numbers where strings are due, and numbers out of range', async (t) => {
  for (const [field, raw] of [
    ['name', '1e309'],
    ['phone', '10'],
    ['budget', '-0'],
    ['name', '123456789012345678901234567890'],
  ]) {
    const e = await refused(t, JSON.stringify({ ...lead, [field]: '<raw>' }).replace('"<raw>"', raw), 'invalid_request')
    t.ok(
      e.details.issues.some((i: { path: string }) => i.path === field),
      JSON.stringify(e.details)
    )
  }
  // A string where a string is due is taken as it is, digits and all.
  const r = await post(JSON.stringify({ ...lead, phone: '10' }))
  t.equal(r.status, 201)
})

t.test('very long strings, huge arrays and many keys answer small 422s', async (t) => {
  await refused(t, JSON.stringify({ ...lead, name: 'x'.repeat(900_000) }), 'invalid_request', /at most 200/)
  await refused(t, JSON.stringify({ ...lead, name: Array(400_000).fill(0) }), 'invalid_request')
  await refused(t, JSON.stringify(Array(400_000).fill(0)), 'invalid_request', /JSON object, got an array/)
  const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 1]))
  const e = await refused(t, JSON.stringify({ ...lead, ...many }), 'invalid_request', /^k0: is not a known field$/)
  t.equal(e.details.issues.length, 1, 'the first unknown field is named, not 20,000')
  const keyed = await refused(t, JSON.stringify({ ...lead, ['k'.repeat(100_000)]: 1 }), 'invalid_request')
  t.ok(keyed.details.issues[0].path.length <= 201, 'a huge unknown key is quoted clipped')
})

t.test('invalid_json never echoes a huge input', async (t) => {
  for (const body of ['x'.repeat(900_000), `{"name":"${'y'.repeat(900_000)}`, `{"a":1,${'z'.repeat(900_000)}`]) {
    const e = await refused(t, body, 'invalid_json')
    t.ok(e.message.length <= 250, `message of ${e.message.length} characters`)
  }
})

t.test('415 for a missing or wrong Content-Type', async (t) => {
  for (const type of [
    'text/plain',
    'application/jsonx',
    'application/json; charset=latin1',
    'multipart/form-data; boundary=x',
    'x'.repeat(5000),
  ]) {
    const r = await post(JSON.stringify(lead), { 'content-type': type })
    t.equal(r.status, 415, type.slice(0, 40))
    t.equal(r.json.error.code, 'unsupported_media_type')
    t.ok(r.text.length < 1000)
  }
})

t.test('a body on GET is refused', async (t) => {
  const withLength = await rawRequest(
    s.port,
    `${head('GET', '/api/v1/me', { authorization: auth, 'content-length': 2 })}{}`
  )
  t.equal(withLength.status, 400)
  t.equal(errorCode(withLength), 'bad_request')
  const chunked = await rawRequest(
    s.port,
    `${head('GET', '/api/v1/me', { authorization: auth, 'transfer-encoding': 'chunked' })}2\r\n{}\r\n0\r\n\r\n`
  )
  t.equal(chunked.status, 400)
  t.equal(errorCode(chunked), 'bad_request')
  const empty = await rawRequest(s.port, head('GET', '/api/v1/me', { authorization: auth, 'content-length': 0 }))
  t.equal(empty.status, 200, 'Content-Length: 0 is no body')
})

t.test('a truncated body: the client stops short and closes', async (t) => {
  const before = await leads()
  const body = JSON.stringify(lead)
  const r = await rawRequest(
    s.port,
    head('POST', '/api/v1/leads', {
      authorization: auth,
      'content-type': 'application/json',
      'content-length': body.length + 50,
    }) + body,
    { end: true }
  )
  t.ok(r.closed, 'the connection ends')
  if (r.status) {
    t.equal(r.status, 400)
    t.equal(errorCode(r), 'bad_request')
  }
  t.equal(await leads(), before, 'nothing stored')
  t.notOk(
    s.log.lines.some((l) => /database unavailable|unhandled error/.test(l)),
    'an aborted body is not mistaken for a fault'
  )
  t.equal((await s.fetch('/healthz')).status, 200)
})

t.test('413 before the body is sent: a huge Content-Length', async (t) => {
  const r = await rawRequest(
    s.port,
    head('POST', '/api/v1/leads', {
      authorization: auth,
      'content-type': 'application/json',
      'content-length': 2 ** 40,
    })
  )
  t.equal(r.status, 413, 'answered with no byte of the body sent')
  t.equal(errorCode(r), 'payload_too_large')
  t.ok(r.closed, 'and the connection is closed')
})

t.test('413 as soon as a chunked body goes over the limit', async (t) => {
  const before = await leads()
  const chunk = Buffer.alloc(64 * 1024, 'a')
  const pieces: (string | Buffer)[] = [
    head('POST', '/api/v1/leads', {
      authorization: auth,
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    }),
  ]
  for (let i = 0; i < 17; i++) pieces.push(`${chunk.length.toString(16)}\r\n`, chunk, '\r\n')
  // No last chunk: the server must not wait for the end of a body it has already refused.
  const r = await rawRequest(s.port, pieces)
  t.equal(r.status, 413)
  t.equal(errorCode(r), 'payload_too_large')
  t.ok(r.closed)
  t.equal(await leads(), before)
})

t.test('huge headers and too many headers: 431 with the Error body', async (t) => {
  const one = await rawRequest(s.port, head('GET', '/api/v1/me', { authorization: auth, 'x-big': 'b'.repeat(20_000) }))
  t.equal(one.status, 431)
  t.equal(errorCode(one), 'header_too_large')
  t.equal(one.headers['cache-control'], 'no-store')
  t.equal(one.headers['x-content-type-options'], 'nosniff')
  t.ok(one.closed)
  const many = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`x-h${i}`, 'v']))
  const r = await rawRequest(s.port, head('GET', '/api/v1/me', { authorization: auth, ...many }))
  t.equal(r.status, 431)
  t.equal(errorCode(r), 'header_too_large')
})

t.test('malformed HTTP: 400 with the Error body', async (t) => {
  for (const bytes of [
    'GARBAGE\r\n\r\n',
    'GET /api/v1/me HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n',
    'GET /api/v1/me HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n',
    'POST /api/v1/leads HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n',
    '\u0000\u0001\u0002\r\n\r\n',
  ]) {
    const r = await rawRequest(s.port, bytes)
    t.equal(r.status, 400, JSON.stringify(bytes))
    t.equal(errorCode(r), 'bad_request')
    t.ok(r.closed)
  }
  t.equal((await s.fetch('/healthz')).status, 200)
})

// Everything the server writes on one connection until it closes it: `first` is written, then `then` once the first
// answer has come.
function exchangeOnOneConnection(first: string, then?: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(s.port, '127.0.0.1', () => socket.write(first))
    let received = ''
    socket.on('data', (d) => {
      received += d.toString('latin1')
      if (then && received.includes('\r\n\r\n{')) socket.write(then, () => (then = undefined))
    })
    socket.on('close', () => resolve(received))
    socket.on('error', () => {})
    socket.setTimeout(10_000, () => socket.destroy())
  })
}

t.test('malformed HTTP after a request on the same connection', async (t) => {
  const served = 'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n'
  const after = await exchangeOnOneConnection(served, 'GARBAGE\r\n\r\n')
  t.match(
    after,
    /^HTTP\/1\.1 200 [\s\S]*HTTP\/1\.1 400 Bad Request\r\n[\s\S]*"code":"bad_request"/,
    'the 400 follows the 200'
  )
  const pipelined = await exchangeOnOneConnection(`${served}GARBAGE\r\n\r\n`)
  t.match(pipelined, /^HTTP\/1\.1 200 /, 'the answer being written is kept whole')
  t.notMatch(pipelined, /HTTP\/1\.1 400/, 'and nothing is written into it: the connection just closes')
})

t.test('odd but valid HTTP is served; what is not served gets the Error body', async (t) => {
  const expect = await rawRequest(s.port, head('GET', '/api/v1/me', { authorization: auth, expect: 'something-else' }))
  t.equal(expect.status, 200, 'an unknown expectation is ignored')
  const upgrade = await rawRequest(
    s.port,
    head('GET', '/api/v1/me', { authorization: auth, connection: 'upgrade', upgrade: 'websocket' })
  )
  t.equal(upgrade.status, 200, 'an upgrade is not taken; the request is served')
  const http10 = await rawRequest(s.port, `GET /api/v1/me HTTP/1.0\r\nauthorization: ${auth}\r\n\r\n`)
  t.equal(http10.status, 200, 'HTTP/1.0 needs no Host')
  const noHost = await rawRequest(s.port, `GET /api/v1/me HTTP/1.1\r\nauthorization: ${auth}\r\n\r\n`)
  t.equal(noHost.status, 400, 'HTTP/1.1 without Host')
  t.equal(errorCode(noHost), 'bad_request')
  const connect = await rawRequest(s.port, 'CONNECT 127.0.0.1:80 HTTP/1.1\r\nhost: 127.0.0.1:80\r\n\r\n')
  t.equal(connect.status, 400, 'CONNECT')
  t.equal(errorCode(connect), 'bad_request')
  t.ok(connect.closed)
})

t.test('two Authorization headers: 401, whichever is valid', async (t) => {
  for (const pair of [
    [auth, auth],
    [auth, `Bearer ${other}`],
    ['Bearer nope', auth],
    [auth, 'Basic eA=='],
  ]) {
    const r = await rawRequest(
      s.port,
      `GET /api/v1/me HTTP/1.1\r\nhost: x\r\nAuthorization: ${pair[0]}\r\nauthorization: ${pair[1]}\r\n\r\n`
    )
    t.equal(r.status, 401)
    t.same(JSON.parse(r.body), { error: { code: 'unauthorized', message: 'Missing or invalid API key' } })
  }
  const single = await rawRequest(s.port, `GET /api/v1/me HTTP/1.1\r\nhost: x\r\nAUTHORIZATION: ${auth}\r\n\r\n`)
  t.equal(single.status, 200, 'one header, in any case, works')
})

t.test('paths match exactly', async (t) => {
  for (const path of [
    '/api/v1/me/',
    '//api/v1/me',
    '/api/v1//me',
    '/api/v1/%6De',
    '/api/v1/m%65',
    '/API/V1/ME',
    '/api/v1/./me',
    '/api/v1/x/../me',
    '/healthz/',
    'http://127.0.0.1/api/v1/me',
    '*',
  ]) {
    const r = await rawRequest(s.port, head('GET', path, { authorization: auth }))
    t.equal(r.status, 404, path)
    t.equal(errorCode(r), 'not_found')
  }
  const r = await rawRequest(s.port, head('GET', '/api/v1/me?x=1&y=%00', { authorization: auth }))
  t.equal(r.status, 200, 'a query string is ignored')
  const long = await rawRequest(s.port, head('GET', `/${'p'.repeat(8000)}`, { authorization: auth }))
  t.equal(long.status, 404)
  t.ok(long.body.length < 1000, 'a long path is quoted clipped')
})

t.test('HEAD answers as GET without a body; OPTIONS answers 204 with Allow', async (t) => {
  const get = await s.fetch('/api/v1/me', { key })
  const getBody = await get.text()
  const h = await s.fetch('/api/v1/me', { key, method: 'HEAD' })
  t.equal(h.status, 200)
  t.equal(h.headers.get('content-length'), String(Buffer.byteLength(getBody)))
  t.equal(h.headers.get('content-type'), 'application/json')
  t.equal(await h.text(), '')
  const unauth = await s.fetch('/api/v1/me', { method: 'HEAD' })
  t.equal(unauth.status, 401)
  t.equal(await unauth.text(), '')
  t.equal((await s.fetch('/healthz', { method: 'HEAD' })).status, 200)
  t.equal((await s.fetch('/api/v1/ai/completions', { key, method: 'HEAD' })).status, 405, 'HEAD only where GET is')
  for (const [path, allow] of [
    ['/api/v1/me', 'GET, HEAD'],
    ['/api/v1/leads', 'POST, GET, HEAD'],
    ['/api/v1/ai/completions', 'POST'],
    ['/api/v1/openapi.json', 'GET, HEAD'],
    ['/readyz', 'GET, HEAD'],
  ]) {
    const o = await s.fetch(path, { method: 'OPTIONS' })
    t.equal(o.status, 204, path)
    t.equal(o.headers.get('allow'), allow)
    t.equal(await o.text(), '')
  }
  t.equal((await s.fetch('/nope', { method: 'OPTIONS' })).status, 404)
})

t.test('every answer carries no-store and nosniff, none x-powered-by', async (t) => {
  const answers = [
    await s.fetch('/api/v1/me', { key }),
    await s.fetch('/api/v1/me'),
    await s.fetch('/nope'),
    await s.fetch('/api/v1/me', { method: 'DELETE' }),
    await s.fetch('/api/v1/me', { method: 'OPTIONS' }),
    await s.fetch('/healthz'),
    await s.fetch('/api/v1/leads', { method: 'POST', key, json: lead }),
    await s.fetch('/api/v1/leads', { method: 'POST', key, body: '{', headers: { 'content-type': 'application/json' } }),
  ]
  for (const r of answers) {
    t.equal(r.headers.get('cache-control'), 'no-store', `${r.status}`)
    t.equal(r.headers.get('x-content-type-options'), 'nosniff')
    t.equal(r.headers.get('x-powered-by'), null)
    await r.arrayBuffer()
  }
})

t.test('slow clients are cut off by the header and request timeouts', async (t) => {
  const slow = await startTestServer(t, { STUDIO_HEADERS_TIMEOUT_MS: '400', STUDIO_REQUEST_TIMEOUT_MS: '800' }, sameDb)
  const before = await leads()
  // Headers that never end.
  const headers = await rawRequest(slow.port, 'GET /api/v1/me HTTP/1.1\r\nhost: x\r\n', {
    drip: { piece: 'x-slow: 1\r\n', intervalMs: 50 },
    timeoutMs: 15_000,
  })
  t.ok(headers.closed, 'cut off')
  t.equal(headers.status, 408)
  t.equal(errorCode(headers), 'request_timeout')
  // Nothing at all.
  const silent = await rawRequest(slow.port, '', { timeoutMs: 15_000 })
  t.ok(silent.closed, 'a silent connection is closed')
  // A body that never ends.
  const body = await rawRequest(
    slow.port,
    `${head('POST', '/api/v1/leads', {
      authorization: auth,
      'content-type': 'application/json',
      'content-length': 10_000,
    })}{`,
    {
      drip: { piece: ' ', intervalMs: 50 },
      timeoutMs: 15_000,
    }
  )
  t.ok(body.closed, 'cut off')
  t.equal(body.status, 408)
  t.equal(errorCode(body), 'request_timeout')
  // A body cut short that the client neither finishes nor closes.
  const stalled = await rawRequest(
    slow.port,
    head('POST', '/api/v1/leads', { authorization: auth, 'content-type': 'application/json', 'content-length': 100 }) +
      '{"name":',
    { timeoutMs: 15_000 }
  )
  t.ok(stalled.closed, 'cut off')
  t.equal(stalled.status, 408)
  t.equal(errorCode(stalled), 'request_timeout')
  t.equal(await leads(), before)
  t.equal((await slow.fetch('/api/v1/me', { key })).status, 200, 'a prompt client is served')
})

t.test('on close, a request still in flight after STUDIO_SHUTDOWN_TIMEOUT_MS is cut off', async (t) => {
  const short = await startTestServer(
    t,
    { STUDIO_SHUTDOWN_TIMEOUT_MS: '300', STUDIO_REQUEST_TIMEOUT_MS: '600000', STUDIO_HEADERS_TIMEOUT_MS: '600000' },
    sameDb
  )
  // A body that never ends keeps its request in flight.
  const hanging = rawRequest(
    short.port,
    head('POST', '/api/v1/leads', { authorization: auth, 'content-type': 'application/json', 'content-length': 100 }) +
      '{',
    { timeoutMs: 20_000 }
  )
  await eventually(() => short.metric('studio_http_requests_in_flight') === 1, { what: 'the request in flight' })
  const closed = await Promise.race([
    short.close().then(() => 'closed'),
    new Promise((r) => setTimeout(() => r('still open after 15 s'), 15_000)),
  ])
  t.equal(closed, 'closed', 'close() does not wait for the request forever')
  t.ok((await hanging).closed, 'the connection was cut')
  t.ok(
    short.log.lines.some((l) => /shutdown timeout/.test(l)),
    'and that was logged'
  )
})
