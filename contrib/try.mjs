// The walk-through's API calls from any shell with Node.js alone (no curl, no shell variables). The key is the last
// line of the file ./try.key (what `studio keys create … > try.key` wrote: the CLI prints the key alone on its last
// line); the server is http://127.0.0.1:$PORT (8080 when PORT is unset), or STUDIO_URL.
//   node contrib/try.mjs me                                   GET /api/v1/me
//   node contrib/try.mjs lead NAME EMAIL SERVICE MESSAGE      POST /api/v1/leads
//   node contrib/try.mjs complete TEXT                        POST /api/v1/ai/completions
//   node contrib/try.mjs stream TEXT                          the same, streamed: the server-sent events as they come
// It prints the answer's body; an answer other than 2xx also prints its status to stderr and exits 1.
import { readFileSync } from 'node:fs'

const USAGE = 'usage: node contrib/try.mjs me | lead NAME EMAIL SERVICE MESSAGE | complete TEXT | stream TEXT'
const base = (process.env.STUDIO_URL ?? `http://127.0.0.1:${process.env.PORT || 8080}`).replace(/\/$/, '')

function fail(line) {
  console.error(`try: ${line}`)
  process.exit(2)
}

// A file written by a shell's `>`: Windows PowerShell 5 writes UTF-16 with a byte-order mark.
function lastLine(file) {
  let bytes
  try {
    bytes = readFileSync(file)
  } catch {
    fail(`no ${file} here: make a key first (node dist/studio.mjs keys create --email E > ${file})`)
  }
  const text = bytes[0] === 0xff && bytes[1] === 0xfe ? bytes.subarray(2).toString('utf16le') : bytes.toString('utf8')
  const line = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1)
  if (!line) fail(`${file} is empty: make a key first (node dist/studio.mjs keys create --email E > ${file})`)
  return line
}

const [command, ...args] = process.argv.slice(2)
const calls = {
  me: () => ({ path: '/api/v1/me' }),
  lead: ([name, email, service, message]) => ({ path: '/api/v1/leads', body: { name, email, service, message } }),
  complete: ([text]) => ({ path: '/api/v1/ai/completions', body: { messages: [{ role: 'user', content: text }] } }),
  stream: ([text]) => ({
    path: '/api/v1/ai/completions',
    body: { messages: [{ role: 'user', content: text }], stream: true },
  }),
}
const arity = { me: 0, lead: 4, complete: 1, stream: 1 }
if (!Object.hasOwn(calls, command) || args.length !== arity[command]) fail(USAGE)

const { path, body } = calls[command](args)
const headers = { authorization: `Bearer ${lastLine('try.key')}` }
if (body) headers['content-type'] = 'application/json'
let res
try {
  res = await fetch(base + path, { method: body ? 'POST' : 'GET', headers, body: body && JSON.stringify(body) })
} catch (err) {
  fail(`${base} does not answer (${err.cause?.code ?? err.message}): is the server running (npm run try-it)?`)
}
for await (const chunk of res.body ?? []) process.stdout.write(chunk)
if (command !== 'stream') process.stdout.write('\n')
if (!res.ok) {
  console.error(`try: ${res.status} ${res.statusText}`)
  process.exitCode = 1
}
