import type { ServerResponse } from 'node:http'
import type { Html } from './html.js'

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
