import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'

// Every /api/v1 response a test gets is recorded here, one JSON line per response in one file per test process (tap
// runs test files in parallel processes), so that responses-check.ts can hold each against the served OpenAPI
// document once the whole run is over. fetch is wrapped by server.ts, raw exchanges are recorded by raw.ts, webhooks
// by the test receivers (receiver.ts) into a file of their own per process.

export interface Recorded {
  file: string
  method: string
  path: string
  status: number
  contentType: string | null
  // Every response header, by its lower-case name.
  headers: Record<string, string>
  body: string
  // false when the body was not read whole (the exchange was cut short): only status and content type are checked.
  complete: boolean
}

const RESPONSES_DIR = new URL('../../.tap/responses/', import.meta.url).pathname
const mine = join(RESPONSES_DIR, `${process.pid}.jsonl`)
const file = process.argv[1] ?? ''

export function recordResponse(r: Omit<Recorded, 'file' | 'path'> & { url: string }) {
  // The path as sent (fetch and the raw client do not normalise it, and neither does the server's router).
  const path = r.url.replace(/^https?:\/\/[^/]*/, '').split(/[?#]/)[0]
  if (!path.startsWith('/api/v1')) return
  const { url: _, ...rest } = r
  mkdirSync(RESPONSES_DIR, { recursive: true })
  appendFileSync(mine, `${JSON.stringify({ file, path, ...rest })}\n`)
}

// Wraps the global fetch (openapi-fetch's client calls it too) so that each answer is recorded; the test reads its
// own response as before, the record is made from a clone.
export function recordFetches() {
  const real = globalThis.fetch
  if ((real as { recording?: boolean }).recording) return
  const wrapped = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await real(input, init)
    const url = input instanceof Request ? input.url : String(input)
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase()
    const headers = Object.fromEntries(res.headers)
    const base = { method, url, status: res.status, contentType: res.headers.get('content-type'), headers }
    res
      .clone()
      .text()
      .then(
        (body) => recordResponse({ ...base, body, complete: true }),
        () => recordResponse({ ...base, body: '', complete: false })
      )
    return res
  }
  globalThis.fetch = Object.assign(wrapped, { recording: true }) as typeof fetch
}

// Every webhook a test's receiver got (receiver.ts), to be held against the document's `webhooks` map the same way.
export interface RecordedWebhook {
  file: string
  headers: Record<string, string | string[] | undefined>
  body: string
}

const WEBHOOKS = '.webhooks.jsonl'

export function recordWebhook(w: Omit<RecordedWebhook, 'file'>) {
  mkdirSync(RESPONSES_DIR, { recursive: true })
  appendFileSync(join(RESPONSES_DIR, `${process.pid}${WEBHOOKS}`), `${JSON.stringify({ file, ...w })}\n`)
}

function readLines<T>(which: (name: string) => boolean): T[] {
  let files: string[]
  try {
    files = readdirSync(RESPONSES_DIR).filter(which)
  } catch {
    return []
  }
  return files.flatMap((f) =>
    readFileSync(join(RESPONSES_DIR, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as T)
  )
}

export const readResponses = () => readLines<Recorded>((f) => f.endsWith('.jsonl') && !f.endsWith(WEBHOOKS))
export const readWebhooks = () => readLines<RecordedWebhook>((f) => f.endsWith(WEBHOOKS))

export const clearResponses = () => rmSync(RESPONSES_DIR, { recursive: true, force: true })
