import type { DbEnv } from './database.js'
import { anthropicMessage, fakeUpstream, json, openaiCompletion } from './fake-upstream.js'
import { startTestServer, type TestServer } from './server.js'
import type { Teardown } from './teardown.js'

// The service over a fake upstream of each protocol (`upstream`: which of them STUDIO_UPSTREAM lists, in order),
// for the SDK-compatible routes' tests: each upstream answers a short text unless a test queues something else.
export async function sdkUpstreams(t: Teardown, dbEnv: DbEnv, upstream: string, env: Record<string, string> = {}) {
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
    { dbEnv, backoff: () => 1 }
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
