import type { DbEnv } from './database.js'
import { anthropicMessage, fakeUpstream, json, openaiCompletion } from './fake-upstream.js'
import type { ServiceOptions } from '../../src/service.js'
import { startTestServer, type TestServer } from './server.js'
import type { Teardown } from './teardown.js'

// The service over a fake upstream of each protocol (`upstream`: which of them STUDIO_UPSTREAM lists, in order),
// for the SDK-compatible routes' tests: each upstream answers a short text unless a test queues something else.
// `server`: the service's options (a clock).
export async function sdkUpstreams(
  t: Teardown,
  dbEnv: DbEnv,
  upstream: string,
  env: Record<string, string> = {},
  server: Partial<ServiceOptions> = {}
) {
  const anthropic = await fakeUpstream(t, json(200, anthropicMessage({ content: [{ type: 'text', text: 'Hello' }] })))
  const openai = await fakeUpstream(t, json(200, openaiCompletion()))
  const s = await startTestServer(
    t,
    {
      STUDIO_UPSTREAM: upstream,
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ...env,
    },
    { dbEnv, backoff: () => 1, ...server }
  )
  return { s, anthropic, openai }
}

// How many completions the key's account has used this month.
export const used = async (s: TestServer, key: string) =>
  ((await (await s.fetch('/api/v1/me', { key })).json()) as { quota: { used: number } }).quota.used

// The error a stream's reading ends with (undefined when it ends well).
export async function streamFailure(stream: AsyncIterable<unknown>): Promise<any> {
  try {
    for await (const _ of stream);
  } catch (e) {
    return e
  }
}

// The service's clock: real time, which a test may move ahead with `set(at)` (then real time moves it on from `at`).
export function movableClock() {
  let offset = 0
  const now = () => Date.now() + offset
  return {
    now,
    set(at: number) {
      offset += at - now()
    },
  }
}

// A fetch for an SDK that notes each answer's status and retry-after (a retried request's included).
export const notingFetch =
  (answers: string[]): typeof fetch =>
  async (input, init) => {
    const res = await fetch(input, init)
    answers.push(`${res.status}${res.headers.has('retry-after') ? ' retry-after' : ''}`)
    return res
  }

// The time the service counts a key's first request at, moved so that it leaves the key's 60-second rate-limit
// window a second and a half from now: a second request now is refused with a retry-after of a second or two, and
// the SDK's retry after it is admitted.
export const RATE_WINDOW_ALMOST_OVER_MS = 58_500
