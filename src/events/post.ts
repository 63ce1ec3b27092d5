import type { Dispatcher } from 'undici'
import type { Transport } from '../ops/transport.js'
import type { SignedHeaders } from './signature.js'

// One webhook POST. Success is a 2xx within `timeoutMs`; at most 64 KiB of the answer is read; a redirect is an
// answer like any other (never followed).

const ANSWER_LIMIT = 64 * 1024

// undici's request API, loaded by the first delivery; it reaches the network through the dispatcher given, whose
// `dispatch` is all a Dispatcher needs to have (ops/transport.ts).
let request: typeof import('undici').request | undefined
async function loadRequestApi() {
  // undici is CommonJS: its exports are the dynamic import's default (in the bundle as well).
  request ??= (await import('undici')).default.request
  return request
}

export interface PostResult {
  status: number | null
  // The first bytes of the answer, or why there was none.
  answer: string
  durationMs: number
  retryAfter?: string
}

export interface Post {
  url: string
  body: string
  headers: SignedHeaders
  userAgent: string
  timeoutMs: number
  signal: AbortSignal
}

async function readAnswer(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= ANSWER_LIMIT) break
  }
  body.destroy()
  return Buffer.concat(chunks).subarray(0, ANSWER_LIMIT).toString('utf8')
}

// The first delivery loads undici (its request API and the dispatcher's Agent) before its deadline starts; a failed
// load throws, and the delivery is tried again when its claim lapses.
export async function postWebhook(dispatcher: Transport, post: Post): Promise<PostResult> {
  const call = request ?? (await loadRequestApi())
  await dispatcher.load?.()
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const deadline = AbortSignal.timeout(post.timeoutMs)
  const signal = AbortSignal.any([deadline, post.signal])
  const url = new URL(post.url)
  let status: number | null = null
  try {
    const res = await call(url, {
      dispatcher: dispatcher as unknown as Dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': post.userAgent, ...post.headers },
      body: post.body,
      signal,
    })
    status = res.statusCode
    const retryAfter = res.headers['retry-after']
    const answer = await readAnswer(res.body).catch((e: Error) => `(answer cut: ${e.message})`)
    return {
      status,
      answer,
      durationMs: elapsed(),
      retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
    }
  } catch (e) {
    const why = deadline.aborted ? `no answer within ${post.timeoutMs} ms` : (e as Error).message
    return { status, answer: `(${why})`, durationMs: elapsed() }
  }
}
