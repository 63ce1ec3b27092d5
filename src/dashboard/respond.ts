import type { ServerResponse } from 'node:http'
import type { Html } from './html.js'
import type { PageCtx } from './page.js'

const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Every dashboard response: no referrer (a sign-in link is a secret in a URL), no framing, no script or style but
// this site's files. (Cache-Control: no-store is already among the pipeline's headers of every response.)
export const SECURITY_HEADERS = [
  'content-security-policy',
  CSP,
  'referrer-policy',
  'no-referrer',
  'x-frame-options',
  'DENY',
]

export function sendHtml(res: ServerResponse, status: number, page: Html, headers: string[]) {
  const body = `<!doctype html>\n${page.text}`
  res.writeHead(status, [
    ...headers,
    ...SECURITY_HEADERS,
    'content-type',
    'text/html; charset=utf-8',
    'content-length',
    String(Buffer.byteLength(body)),
  ])
  res.end(body)
}

export function redirect(res: ServerResponse, location: string, headers: string[]) {
  res.writeHead(303, [...headers, ...SECURITY_HEADERS, 'location', location, 'content-length', '0']).end()
}

// Resolves once the response can take more (or is gone), leaving no listener behind.
const writable = (res: ServerResponse) =>
  new Promise<void>((ok) => {
    const done = () => {
      res.off('drain', done).off('close', done)
      ok()
    }
    res.on('drain', done).on('close', done)
  })

// A CSV download streamed as its chunks are made, waiting for the socket to drain.
export async function streamCsv(ctx: PageCtx, filename: string, chunks: AsyncIterable<string>) {
  const { res } = ctx
  res.writeHead(200, [
    ...ctx.headers,
    ...SECURITY_HEADERS,
    'content-type',
    'text/csv; charset=utf-8',
    'content-disposition',
    `attachment; filename="${filename}"`,
  ])
  for await (const chunk of chunks) {
    if (res.destroyed) break
    if (!res.write(chunk)) await writable(res)
  }
  res.end()
  return { streamed: true } as const
}

// A JSON download (a person's data): sent whole, as an attachment named `filename`.
export function sendJsonDownload(ctx: PageCtx, filename: string, value: unknown) {
  const body = `${JSON.stringify(value, null, 2)}\n`
  ctx.res.writeHead(200, [
    ...ctx.headers,
    ...SECURITY_HEADERS,
    'content-type',
    'application/json; charset=utf-8',
    'content-disposition',
    `attachment; filename="${filename}"`,
    'content-length',
    String(Buffer.byteLength(body)),
  ])
  ctx.res.end(body)
  return { streamed: true } as const
}
