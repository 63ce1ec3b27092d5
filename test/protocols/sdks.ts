import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { fakeUpstream } from '../support/fake-upstream.js'
import type { Teardown } from '../support/teardown.js'

// The official SDKs pointed at a real HTTP server that answers what a test queues (a translated body, a translated
// stream, an error body) and records what the SDK sent: what the SDKs make of our output, before any route exists.
export async function sdks(t: Teardown) {
  const server = await fakeUpstream(t, (_req, res) => res.writeHead(500).end())
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 })
  const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.url, maxRetries: 0 })
  return { server, openai, anthropic }
}

// A stream served as its SSE text, in pieces of `size` bytes (so that events, and the JSON inside them, are split).
export const sseBody =
  (text: string, size = 7) =>
  (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    const write = (at: number) => {
      if (at >= text.length) return res.end()
      res.write(text.slice(at, at + size))
      setImmediate(() => write(at + size))
    }
    write(0)
  }
