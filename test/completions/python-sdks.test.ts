import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import type { CreateKeyInput } from '../../src/accounts/key-lifecycle.js'
import { testDatabase } from '../support/database.js'
import { anthropicMessage, fakeUpstream, json, openaiCompletion, sse } from '../support/fake-upstream.js'
import { cachedPython, pythonSkip, pytest } from '../support/pytest.js'
import { issueKey, startTestServer, type TestServer } from '../support/server.js'

// The SDK-compatible routes driven by the official Python SDKs, `openai` and `anthropic`: the pytest directory
// python_sdks/ against a service per fallback list (`openai`, `anthropic`, and both orders of the two) over one fake
// upstream of each protocol, with the interpreter STUDIO_PYTHON (.ci/run installs pytest and both SDKs into it), or
// else a virtual environment kept in node_modules/.cache, made once. Each pytest test queues the answers its
// upstreams give through a control server of this file's own (python_sdks/upstreams.py says its routes), and
// reads back what they were sent.

const dir = new URL('./python_sdks/', import.meta.url).pathname
const LISTS = ['openai', 'anthropic', 'anthropic,openai', 'openai,anthropic']

async function bodyOf(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c)
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {}
}

// An answer as pytest queues it: a JSON body with its status and headers, or a stream of server-sent events written
// in pieces of `sizes` bytes.
interface Answer {
  status?: number
  json?: unknown
  headers?: Record<string, string>
  sse?: string
  sizes?: number[]
}

t.test('the Python SDKs', { skip: pythonSkip(t) }, async (t) => {
  const bin =
    process.env.STUDIO_PYTHON ?? (await cachedPython('studio-python-sdks-venv', ['pytest', 'openai', 'anthropic']))
  const dbEnv = await testDatabase(t)
  const fakes = {
    anthropic: await fakeUpstream(t, json(200, anthropicMessage({ content: [{ type: 'text', text: 'Hello' }] }))),
    openai: await fakeUpstream(t, json(200, openaiCompletion())),
  }
  // Every service's clock (the rate limiter's) jumps 58 s on POST /clock: a key's request of just before leaves its
  // window of a minute 2 s later, so that its next one is refused with a retry-after of 2 s at most.
  let warp = 0
  const servers: TestServer[] = []
  for (const list of LISTS)
    servers.push(
      await startTestServer(
        t,
        {
          STUDIO_UPSTREAM: list,
          ANTHROPIC_API_KEY: 'sk-test',
          ANTHROPIC_BASE_URL: fakes.anthropic.url,
          OPENAI_BASE_URL: `${fakes.openai.url}/v1`,
          // A STARTER account (control's POST /keys {"plan": "STARTER"}) has one completion a month.
          STUDIO_QUOTA_STARTER: '1',
        },
        { dbEnv, backoff: () => 1, clock: () => Date.now() + warp }
      )
    )
  const services = Object.fromEntries(LISTS.map((list, i) => [list, servers[i].url]))
  const { sql } = servers[0].db

  // Answers queued and taken, so that a test that leaves one unused fails.
  let queued = 0
  let taken = 0
  const routes: Record<string, (body: any) => unknown> = {
    'POST /reset': () => {
      const left = queued - taken
      queued = taken = 0
      for (const fake of Object.values(fakes)) fake.reset()
      return { left }
    },
    'POST /answers': (body: { upstream: keyof typeof fakes; answers: Answer[] }) => {
      for (const a of body.answers) {
        const behaviour =
          a.sse === undefined ? json(a.status ?? 200, a.json, a.headers) : sse(a.sse, { sizes: a.sizes })
        queued++
        fakes[body.upstream].next((req, res, seen) => {
          taken++
          behaviour(req, res, seen)
        })
      }
      return {}
    },
    'POST /seen': () => ({
      anthropic: fakes.anthropic.seen.map(({ path, headers, body }) => ({ path, headers, body })),
      openai: fakes.openai.seen.map(({ path, headers, body }) => ({ path, headers, body })),
    }),
    'POST /keys': async (body: { plan: string | null; rate_limit: number | null; models: string[] | null }) => {
      const input: CreateKeyInput = {
        email: `py-sdk-${Math.random().toString(36).slice(2)}@example.com`,
        plan: body.plan ?? undefined,
        limits: { rateLimit: body.rate_limit ?? null, models: body.models ?? null },
      }
      return { key: await issueKey(sql, input) }
    },
    'POST /clock': () => {
      warp += 58_000
      return {}
    },
  }
  const control = createServer((req, res) => {
    const route = routes[`${req.method} ${req.url}`]
    void bodyOf(req)
      .then(async (body) => {
        if (!route) return res.writeHead(404).end()
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await route(body)))
      })
      .catch((e) => res.writeHead(500).end(String(e)))
  })
  await new Promise<void>((ok) => control.listen(0, '127.0.0.1', ok))
  t.teardown(() => new Promise((ok) => control.close(ok)))

  await pytest(t, bin, {
    cwd: dir,
    tests: '.',
    env: {
      STUDIO_TEST_SERVICES: JSON.stringify(services),
      STUDIO_TEST_CONTROL_URL: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    },
  })
})
