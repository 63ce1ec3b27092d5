// tap's `after` step (package.json): every /api/v1 response the run's tests got (responses.ts) is held against the
// OpenAPI document the server serves, as a contract proxy such as Prism would: the status must be one the document
// lists for the operation, every header sent (but HTTP's framing and CORS's) one it declares for that status, the
// content type one it gives for that status, the body valid against its schema (a stream's events: each against the
// schema the media type's `x-events` gives its name).
// HEAD is checked as the GET it mirrors (RFC 9110; the document says so), without a body. A method a path has no
// operation for must be answered as every operation of that path describes it (405), a path the document does not
// have as every operation describes it (404). Every webhook the run's receivers got (receiver.ts) is held against the
// document's `webhooks` map the same way: its type must be in the map, the headers the map requires present, the
// content type and the body as the map gives them for that type (a Slack endpoint's message: Slack's `{"text"}`).
import t from 'tap'
import { issueKey, startTestServer } from './server.js'
import { conforms, resolve } from './json-schema.js'
import { type Recorded, type RecordedWebhook, readResponses, readWebhooks } from './responses.js'

type Json = Record<string, any>
const BASE = '/api/v1'

const recorded = readResponses()
const s = await startTestServer(t)
const key = await issueKey(s.db.sql, { email: 'contract@example.com' })
const doc = (await (await s.fetch(`${BASE}/openapi.json`, { key })).json()) as Json

// A path item's operations are its methods' members (not `parameters`, `summary`, …); OPTIONS is the pipeline's.
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'trace'])
const escaped = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&')

// The document's path that names a concrete URL path: the same path, else a template (`/things/{id}`) it fills.
function pathItemOf(path: string): [string, Json] | undefined {
  const paths = Object.entries(doc.paths as Json)
  return (
    paths.find(([p]) => p === path) ??
    paths.find(([p]) => new RegExp(`^${escaped(p).replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path))
  )
}

// Whether an operation's answer of `status` is the spec's Error body (`{error: {code, message, details}}`) rather
// than a protocol's own (OpenAI's and Anthropic's both carry `error.type`).
function answersInErrorBody(op: Json, status: number): boolean {
  const declared = op.responses[String(status)]
  const schema = declared?.content?.['application/json']?.schema
  return !schema?.properties?.error?.properties?.type
}

function operationsFor(r: Recorded): { name: string; op: Json }[] {
  const entry = pathItemOf(r.path.slice(BASE.length))
  const all = (item: Json, where: string) =>
    Object.entries(item)
      .filter(([m]) => METHODS.has(m))
      .map(([m, op]) => ({ name: `${m.toUpperCase()} ${where}`, op }))
  // A path no route has is answered by the router in the Error body: held against every operation that answers
  // in it (not the SDK-compatible routes, whose errors are their protocol's own body).
  if (!entry)
    return Object.entries(doc.paths as Json)
      .flatMap(([p, item]) => all(item, p))
      .filter(({ op }) => answersInErrorBody(op, r.status))
  const [template, item] = entry
  const method = r.method === 'HEAD' && item.get ? 'get' : r.method.toLowerCase()
  return item[method] ? [{ name: `${r.method} ${template}`, op: item[method] }] : all(item, template)
}

function problemsWith(r: Recorded, op: Json): string[] {
  const declared = op.responses[String(r.status)]
  if (!declared) return [`status ${r.status} is not listed (${Object.keys(op.responses).join(', ')})`]
  const response = declared.$ref ? resolve(doc, declared.$ref) : declared
  const undeclared = headerProblems(r, response)
  if (undeclared.length) return undeclared
  const type = r.contentType?.split(';')[0].trim() ?? null
  if (!response.content) return r.body === '' ? [] : [`status ${r.status} has no content, got ${type}`]
  const media = type && response.content[type]
  if (!media) return [`content type ${type} is not one of ${Object.keys(response.content).join(', ')}`]
  if (!r.complete || r.method === 'HEAD') return []
  if (type === 'text/event-stream') return eventProblems(r.body, media['x-events'] ?? {}, media['x-terminator'])
  let body: unknown
  try {
    body = JSON.parse(r.body)
  } catch {
    return [`the body is not JSON: ${r.body.slice(0, 100)}`]
  }
  return conforms(body, media.schema, doc)
}

// The headers of HTTP's framing and the ones every answer carries alike, CORS's (the protocol's own) and `server`
// (the service sends none; a reverse proxy in front, as test/ops/nginx.test.ts's, adds its own): the document need not
// declare them. Any other header sent must be one the response declares.
const UNDECLARED =
  /^(content-type|content-length|transfer-encoding|connection|keep-alive|date|server|cache-control|x-content-type-options|vary|access-control-.*)$/

function headerProblems(r: Recorded, response: Json): string[] {
  const declared = new Set(Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()))
  return Object.keys(r.headers ?? {})
    .filter((h) => !UNDECLARED.test(h) && !declared.has(h))
    .map((h) => `status ${r.status} sends the undeclared header ${h}`)
}

// A stream of server-sent events: each event one the document's `x-events` names, its data valid against its schema
// (but for a last event whose data is the document's `x-terminator`, OpenAI's `[DONE]`).
function eventProblems(body: string, events: Json, terminator?: string): string[] {
  const problems: string[] = []
  for (const block of body.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l && !l.startsWith(':'))
    if (lines.length === 0) continue
    const name = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message'
    const data = lines
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n')
    if (terminator !== undefined && data === terminator) continue
    if (!events[name]) problems.push(`event ${name} is not one of ${Object.keys(events).join(', ')}`)
    else {
      try {
        problems.push(...conforms(JSON.parse(data), events[name], doc).map((p) => `event ${name}: ${p}`))
      } catch {
        problems.push(`event ${name}: the data is not JSON: ${data.slice(0, 100)}`)
      }
    }
  }
  return problems
}

t.test('every /api/v1 response of the run is described by the served OpenAPI document', async (t) => {
  const seen = new Map<string, number>()
  const failures = new Map<string, string>()
  for (const r of recorded) {
    const ops = operationsFor(r)
    for (const { name, op } of ops) {
      const problems = problemsWith(r, op)
      const where = `${name} → ${r.status}`
      seen.set(where, (seen.get(where) ?? 0) + 1)
      if (problems.length) failures.set(`${where}: ${problems.join('; ')}`, `${r.file} ${r.method} ${r.path}`)
    }
  }
  for (const [problem, example] of failures) t.fail(problem, { example })
  t.comment(`${recorded.length} responses from ${new Set(recorded.map((r) => r.file)).size} test files`)
  for (const [where, n] of [...seen].sort()) t.comment(`${where}: ${n}`)
  t.equal(failures.size, 0, 'no response outside the document')
})

const SLACK = {
  type: 'object',
  required: ['text'],
  properties: { text: { type: 'string' } },
  additionalProperties: false,
}

function webhookProblems(w: RecordedWebhook): { type: string; problems: string[] } {
  let body: Json
  try {
    body = JSON.parse(w.body)
  } catch {
    return { type: '(not JSON)', problems: [`the body is not JSON: ${w.body.slice(0, 100)}`] }
  }
  // A Slack endpoint's message (events/slack.ts) is not in the document: Slack's own format, `{"text": string}`.
  if (body?.type === undefined && body?.text !== undefined)
    return { type: '(slack message)', problems: conforms(body, SLACK, doc) }
  const type = String(body?.type)
  const post = (doc.webhooks as Json)?.[type]?.post
  if (!post) return { type, problems: [`${type} is not in the webhooks map`] }
  const missing = (post.parameters as Json[])
    .filter((p) => p.in === 'header' && p.required && w.headers[p.name.toLowerCase()] === undefined)
    .map((p) => `lacks the header ${p.name}`)
  const contentType = String(w.headers['content-type']).split(';')[0].trim()
  const media = post.requestBody.content[contentType]
  if (!media) return { type, problems: [...missing, `content type ${contentType} is not the map's`] }
  return { type, problems: [...missing, ...conforms(body, media.schema, doc)] }
}

t.test("every webhook the run's receivers got is described by the document's webhooks map", async (t) => {
  const webhooks = readWebhooks()
  const seen = new Map<string, number>()
  const failures = new Map<string, string>()
  for (const w of webhooks) {
    const { type, problems } = webhookProblems(w)
    seen.set(type, (seen.get(type) ?? 0) + 1)
    if (problems.length) failures.set(`${type}: ${problems.join('; ')}`, `${w.file} ${w.body.slice(0, 200)}`)
  }
  for (const [problem, example] of failures) t.fail(problem, { example })
  t.comment(`${webhooks.length} webhooks from ${new Set(webhooks.map((w) => w.file)).size} test files`)
  for (const [type, n] of [...seen].sort()) t.comment(`${type}: ${n}`)
  t.equal(failures.size, 0, 'no webhook outside the document')
})
