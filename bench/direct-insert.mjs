// The leads baseline: the same rows inserted by the same driver at the same concurrency, with no HTTP.
import { join } from 'node:path'
import postgres from 'postgres'

const { db, accountId, lead: b, connections, seconds } = JSON.parse(process.argv[2])
const sql = postgres(
  db.DATABASE_URL ?? { path: join(db.STUDIO_DATA_DIR, '.s.PGSQL.5432'), user: 'postgres', database: 'postgres' },
  {
    max: db.DATABASE_URL ? connections : 4,
    onnotice: () => {},
  }
)
let measuring = false
let stop = false
let n = 0
const insert = () => sql`
  insert into leads (account_id, key_prefix, name, email, service, message, phone, company, budget, locale, source, utm_source, utm_medium, utm_campaign)
  values (${accountId}, 'direct', ${b.name}, ${b.email}, ${b.service}, ${b.message}, ${b.phone ?? null}, ${b.company ?? null}, ${b.budget ?? null},
          ${b.locale ?? null}, ${b.source ?? null}, ${b.utm?.source ?? null}, ${b.utm?.medium ?? null}, ${b.utm?.campaign ?? null})
  returning id, created_at`
const loops = Array.from({ length: connections }, async () => {
  while (!stop) {
    await insert()
    if (measuring) n++
  }
})
await new Promise((r) => setTimeout(r, 1000))
measuring = true
const t0 = performance.now()
await new Promise((r) => setTimeout(r, seconds * 1000))
measuring = false
const elapsed = (performance.now() - t0) / 1000
stop = true
await Promise.all(loops)
await sql.end()
process.stdout.write(`${JSON.stringify({ rps: n / elapsed })}\n`)
