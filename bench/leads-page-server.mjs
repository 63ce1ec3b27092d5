// The anchor for GET /api/v1/leads: a bare node:http server answering the same page (`limit`, `cursor`) of one
// account's leads with the same keyset SELECT and the same notes SELECT as src/leads/read.ts, through the same
// driver and pool size, and the same JSON; no key, scope, validation or rate limit.
import { createServer } from 'node:http'
import { join } from 'node:path'
import postgres from 'postgres'

const { db, accountId } = JSON.parse(process.argv[2])
const sql = postgres(
  db.DATABASE_URL ?? { path: join(db.STUDIO_DATA_DIR, '.s.PGSQL.5432'), user: 'postgres', database: 'postgres' },
  { max: db.DATABASE_URL ? 20 : 4, onnotice: () => {} }
)

const cursorOf = (s) => (s ? Buffer.from(s, 'base64url').toString('utf8').split('|') : null)
const cursorAfter = (row) => Buffer.from(`${row.at}|${row.id}`).toString('base64url')

const server = createServer(async (req, res) => {
  const q = new URL(req.url, 'http://x').searchParams
  const limit = Number(q.get('limit') ?? 50)
  const from = cursorOf(q.get('cursor'))
  const rows = await sql`
    select l.id, to_char(l.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, l.created_at,
      l.updated_at, l.name, l.email, l.service, l.message, l.phone, l.company, l.budget, l.locale, l.source,
      l.utm_source, l.utm_medium, l.utm_campaign, l.status, u.email as assignee, l.key_prefix, l.spam
    from leads l left join users u on u.id = l.assignee_id
    where l.account_id = ${accountId} and l.spam = false
    ${from ? sql`and (l.created_at, l.id) < (${from[0]}::text::timestamptz, ${from[1]}::uuid)` : sql``}
    order by l.created_at desc, l.id desc limit ${limit + 1}`
  const page = rows.slice(0, limit)
  const notes = new Map(page.map((r) => [r.id, []]))
  if (page.length) {
    const found = await sql`
      select lead_id, author_kind, author, text, created_at from lead_notes
      where lead_id = any(${sql.array(page.map((r) => r.id))}::uuid[]) order by created_at, id`
    for (const n of found)
      notes.get(n.lead_id)?.push({
        text: n.text,
        author: n.author,
        authorKind: n.author_kind,
        createdAt: n.created_at.toISOString(),
      })
  }
  const leads = page.map((r) => ({
    id: r.id,
    createdAt: r.created_at.toISOString(),
    updatedAt: (r.updated_at ?? r.created_at).toISOString(),
    name: r.name,
    email: r.email,
    service: r.service,
    message: r.message,
    phone: r.phone,
    company: r.company,
    budget: r.budget,
    locale: r.locale,
    source: r.source,
    utm:
      (r.utm_source ?? r.utm_medium ?? r.utm_campaign) === null
        ? null
        : { source: r.utm_source, medium: r.utm_medium, campaign: r.utm_campaign },
    status: r.status,
    assignee: r.assignee,
    keyPrefix: r.key_prefix,
    spam: r.spam,
    notes: notes.get(r.id),
  }))
  const body = JSON.stringify({ leads, next_cursor: rows.length > limit ? cursorAfter(page.at(-1)) : null })
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
