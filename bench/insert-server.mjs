// The floor for POST /leads on this machine: a minimal node:http server that parses the JSON body and inserts it
// with the same driver and pool size, with no auth, validation or limits.
import { createServer } from 'node:http'
import { join } from 'node:path'
import postgres from 'postgres'

const { db, accountId } = JSON.parse(process.argv[2])
const sql = postgres(
  db.DATABASE_URL ?? { path: join(db.STUDIO_DATA_DIR, '.s.PGSQL.5432'), user: 'postgres', database: 'postgres' },
  {
    max: db.DATABASE_URL ? 20 : 4,
    onnotice: () => {},
  }
)
const server = createServer(async (req, res) => {
  const chunks = []
  for await (const c of req) chunks.push(c)
  const b = JSON.parse(Buffer.concat(chunks))
  const [row] = await sql`
    insert into leads (account_id, key_prefix, name, email, service, message, phone, company, budget, locale, source, utm_source, utm_medium, utm_campaign)
    values (${accountId}, 'floor', ${b.name}, ${b.email}, ${b.service}, ${b.message}, ${b.phone ?? null}, ${b.company ?? null}, ${b.budget ?? null},
            ${b.locale ?? null}, ${b.source ?? null}, ${b.utm?.source ?? null}, ${b.utm?.medium ?? null}, ${b.utm?.campaign ?? null})
    returning id, created_at`
  const body = JSON.stringify({ id: row.id, createdAt: row.created_at.toISOString() })
  res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
