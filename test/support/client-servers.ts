import { execFile } from 'node:child_process'
import { createServer as createHttpServer, request } from 'node:http'
import { createServer as createTcpServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { anthropicMessage, anthropicStream, fakeUpstream, json, sse } from './fake-upstream.js'
import { buildBundle } from './bundle.js'
import { testDatabase } from './database.js'
import { refusedPort } from './ports.js'
import { spawnServer } from './processes.js'
import { issuedKeys, startTestServer } from './server.js'
import type { Teardown } from './teardown.js'

const exec = promisify(execFile)

// What the client tests (TypeScript and Python) run against, each file its own set:
// - `baseURL`: the built bundle (`studio serve`) over a fake Anthropic upstream, plan FREE's quota QUOTA. A
//   completion whose last message starts with `flaky:` is refused upstream with 503 (Retry-After: 0) three times,
//   so the server answers 503 once (it retries the upstream twice itself) and the client's retry succeeds.
// - `proxyURL`: a proxy before it that forwards every request but drops the first response per Idempotency-Key
//   after the server has answered it (the connection is destroyed instead).
// - `warpURL`: an in-process server with STUDIO_RATE_LIMIT=2 whose limiter clock jumps forward 58.5 s on
//   `POST controlURL`, so a 429's Retry-After is about a second instead of a minute.
// - `refusedURL`: port 1, where nothing listens; `silentURL`: a server that accepts and never answers.
// A streamed completion (`stream: true`) is streamed upstream ('Hello', ', world'); one whose last message starts
// with `die:` breaks off after its first delta, one starting with `hold:` waits there until its socket closes;
// `GET closedURL` answers the last messages of the upstream calls whose socket closed before their end.
export const QUOTA = 5

const stream = anthropicStream()
const cut = Buffer.from(stream).indexOf('event: content_block_stop')

export async function clientServers(t: Teardown) {
  const flaky = new Map<string, number>()
  const upstream = await fakeUpstream(t, (req, res, seen) => {
    const last = seen.body?.messages?.at(-1)?.content
    const text = typeof last === 'string' ? last : (last?.[0]?.text ?? '')
    const n = (flaky.get(text) ?? 0) + 1
    flaky.set(text, n)
    if (text.startsWith('flaky:') && n <= 3) {
      const busy = { type: 'error', error: { type: 'overloaded_error', message: 'busy' } }
      return json(503, busy, { 'retry-after': '0' })(req, res, seen)
    }
    if (seen.body?.stream !== true) return json(200, anthropicMessage())(req, res, seen)
    const after = text.startsWith('die:') || text.startsWith('hold:') ? cut : undefined
    sse(stream, { after, die: text.startsWith('die:'), pause: () => new Promise((ok) => res.once('close', ok)) })(
      req,
      res,
      seen
    )
  })
  const lastText = (body: any) => body?.messages?.at(-1)?.content
  const env = {
    ...(await testDatabase(t)),
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: upstream.url,
    STUDIO_QUOTA_FREE: String(QUOTA),
    STUDIO_AUTH_FAIL_LIMIT: '100000',
  }
  const server = await spawnServer(t, env)
  const bin = await buildBundle(t)
  // A key made with the bundle's CLI; `args` adds options (e.g. `--scopes`).
  const key = async (email: string, args: string[] = []) => {
    const { stdout } = await exec(process.execPath, [bin, 'keys', 'create', '--email', email, ...args], {
      env: { PATH: process.env.PATH, ...env },
    })
    const k = stdout.trim().split('\n').at(-1)!
    issuedKeys.push(k)
    return k
  }
  let warp = 0
  const warped = await startTestServer(t, { STUDIO_RATE_LIMIT: '2' }, { clock: () => Date.now() + warp })
  const control = await listen(
    t,
    createHttpServer((_req, res) => {
      warp += 58_500
      res.end()
    })
  )
  return {
    baseURL: `${server.url}/api/v1`,
    proxyURL: `${await dropFirstResponse(t, server.url)}/api/v1`,
    warpURL: `${warped.url}/api/v1`,
    warpKey: () => warped.key(),
    controlURL: control,
    refusedURL: `http://127.0.0.1:${await refusedPort()}/api/v1`,
    closedURL: await listen(
      t,
      createHttpServer((_req, res) => {
        res.end(JSON.stringify(upstream.seen.filter((s) => s.aborted).map((s) => lastText(s.body))))
      })
    ),
    silentURL: await listen(
      t,
      createTcpServer(() => {})
    ),
    key,
  }
}

async function listen(t: Teardown, server: ReturnType<typeof createTcpServer> | ReturnType<typeof createHttpServer>) {
  const sockets = new Set<Socket>()
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    return new Promise((ok) => server.close(ok))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function dropFirstResponse(t: Teardown, target: string) {
  const seen = new Set<string>()
  const proxy = createHttpServer((req, res) => {
    const key = req.headers['idempotency-key']
    const drop = typeof key === 'string' && !seen.has(key)
    if (typeof key === 'string') seen.add(key)
    const out = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = []
      answer.on('data', (c: Buffer) => chunks.push(c))
      answer.on('end', () => {
        if (drop) return req.socket.destroy()
        res.writeHead(answer.statusCode!, answer.headers).end(Buffer.concat(chunks))
      })
    })
    req.pipe(out)
  })
  return listen(t, proxy)
}
