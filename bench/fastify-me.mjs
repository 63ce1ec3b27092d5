// The anchor for GET /me: an idiomatic Fastify server doing what a /me endpoint must: the bearer key's prefix looked
// up in PostgreSQL with the same driver (each answer cached 30 s), SHA-256 of the secret compared in constant time,
// a per-key rate limiter (fixed window in memory, as @fastify/rate-limit's local store), Fastify's own logger (pino)
// at info level on stdout, and the same body as the service's answer.
import { createHash, timingSafeEqual } from 'node:crypto'
import { join } from 'node:path'
import Fastify from 'fastify'
import postgres from 'postgres'

const { db, body, limit = 300 } = JSON.parse(process.argv[2])
const sql = postgres(
  db.DATABASE_URL ?? { path: join(db.STUDIO_DATA_DIR, '.s.PGSQL.5432'), user: 'postgres', database: 'postgres' },
  { max: 4, onnotice: () => {} }
)
const keys = new Map()
const windows = new Map()
const unauthorized = JSON.stringify({ error: { code: 'unauthorized', message: 'Missing or invalid API key' } })

async function lookup(prefix) {
  const hit = keys.get(prefix)
  if (hit && hit.until > Date.now()) return hit.row
  const [row] = await sql`select secret_sha256, account_id from api_keys where prefix = ${prefix}`
  keys.set(prefix, { row, until: Date.now() + 30_000 })
  return row
}

function limited(prefix) {
  const now = Date.now()
  let w = windows.get(prefix)
  if (!w || w.resetAt <= now) windows.set(prefix, (w = { count: 0, resetAt: now + 60_000 }))
  return ++w.count > limit
}

const app = Fastify({ logger: { level: 'info' } })
app.get('/api/v1/me', async (req, reply) => {
  reply.header('content-type', 'application/json')
  const m = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')
  const parts = m ? m[1].split('_') : []
  const row = parts.length === 3 ? await lookup(parts[1]) : undefined
  const hash = createHash('sha256')
    .update(parts[2] ?? '')
    .digest()
  if (!row || !timingSafeEqual(hash, row.secret_sha256)) return reply.code(401).send(unauthorized)
  if (limited(parts[1])) return reply.code(429).send('{"error":{"code":"rate_limited"}}')
  return body
})
await app.listen({ port: 0, host: '127.0.0.1' })
process.stderr.write(`${JSON.stringify({ port: app.server.address().port })}\n`)
