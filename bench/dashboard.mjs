// npm run bench:dashboard (also run by npm run bench) — the dashboard with 100,000 leads in one account: the leads
// page's server time (from the access log's `ms`), and the growth of the server's RSS while the CSV of all of them
// streams. Needs PostgreSQL (DATABASE_URL, default the machine's): a scratch database is created and dropped.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { NODE_FLAGS, UNIT_ENV } from './unit-flags.mjs'

const LEADS = Number(process.env.BENCH_LEADS ?? 100_000)
const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const log = (s) => process.stderr.write(`${s}\n`)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])

const dir = mkdtempSync(join(tmpdir(), 'studio-bench-dash-'))
const name = `studio_bench_dash_${process.pid}`
const root = postgres(admin, { max: 1, onnotice: () => {} })
await root.unsafe(`create database ${name}`)
const url = new URL(admin)
url.pathname = `/${name}`
const dbUrl = url.toString()
let server
try {
  execFileSync(process.execPath, ['build.mjs'], { env: { ...process.env, STUDIO_BUILD_OUTDIR: join(dir, 'dist') } })
  const bin = join(dir, 'dist', 'studio.mjs')
  const port = await new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => ok(port))
    })
  })
  const env = { ...UNIT_ENV, PATH: process.env.PATH, DATABASE_URL: dbUrl, PORT: String(port), LOG_LEVEL: 'info' }
  if (process.env.BENCH_SERVER_NODE_OPTIONS) env.NODE_OPTIONS = process.env.BENCH_SERVER_NODE_OPTIONS
  const base = `http://127.0.0.1:${port}`
  server = spawn(process.execPath, [...NODE_FLAGS, bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  const times = []
  let buf = ''
  server.stdout.on('data', (d) => {
    buf += d
    const lines = buf.split('\n')
    buf = lines.pop()
    for (const l of lines) if (l.includes('"route":"/dashboard"')) times.push(JSON.parse(l).ms)
  })
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/healthz`).catch(() => null))?.ok) break
    if (i > 300) throw new Error('the server never became healthy')
    await new Promise((r) => setTimeout(r, 100))
  }
  const link = execFileSync(process.execPath, [bin, 'signin-link', '--email', 'bench@example.com'], { env })
    .toString()
    .trim()
    .split('\n')
    .at(-1)
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} })
  log(`seeding ${LEADS} leads`)
  await sql`insert into leads (account_id, key_prefix, name, email, service, message, company, created_at)
    select u.account_id, 'benchbenchbe', 'Lead ' || g, 'lead' || g || '@example.com', 'web',
           'A message of some length, as a contact form would send it, number ' || g, 'Company ' || (g % 1000),
           now() - g * interval '1 minute'
    from users u, generate_series(1, ${LEADS}) g where u.email = 'bench@example.com'`
  await sql`analyze leads`
  await sql.end()
  const form = new URLSearchParams({ password: 'benchmark password', confirm: 'benchmark password' })
  const set = await fetch(link, { method: 'POST', body: form, redirect: 'manual', headers: { origin: base } })
  const cookie = set.headers.get('set-cookie').split(';')[0]
  const get = async (path) => {
    const r = await fetch(base + path, { headers: { cookie } })
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`)
    return r.text()
  }
  const measure = async (label, path, n = 40) => {
    for (let i = 0; i < 5; i++) await get(path)
    await new Promise((r) => setTimeout(r, 100))
    times.length = 0
    for (let i = 0; i < n; i++) await get(path)
    await new Promise((r) => setTimeout(r, 100))
    console.log(`${label.padEnd(34)} server ms: median ${median(times).toFixed(2)}  p95 ${p95(times).toFixed(2)}`)
  }
  const first = await get('/dashboard/leads')
  const next = /href="(\/dashboard\/leads\?after=[^"]+)"/.exec(first)[1]
  console.log(
    `dashboard, ${LEADS.toLocaleString('en-US')} leads in one account; studio: node ${NODE_FLAGS.join(' ') || '(no flags)'}`
  )
  await measure('leads page (first 50)', '/dashboard/leads')
  await measure('leads page (second page, keyset)', next)
  await measure('leads search (q=lead 9999)', '/dashboard/leads?q=lead%209999', 10)
  // The server's RSS sampled every 10 ms while the whole CSV streams to a reader that keeps none of it.
  for (const run of ['first', 'second']) {
    const before = rssKb(server.pid)
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, rssKb(server.pid))), 10)
    const started = performance.now()
    const res = await fetch(`${base}/dashboard/leads.csv`, { headers: { cookie } })
    let bytes = 0
    let rows = -1
    for await (const chunk of res.body) {
      bytes += chunk.length
      for (const b of chunk) if (b === 10) rows++
    }
    clearInterval(sampler)
    const seconds = (performance.now() - started) / 1000
    console.log(
      `CSV export (${run}): ${rows.toLocaleString('en-US')} rows, ${(bytes / 1e6).toFixed(1)} MB in ` +
        `${seconds.toFixed(1)} s; server RSS ${(before / 1024).toFixed(0)} MB before, peak +${((peak - before) / 1024).toFixed(1)} MB`
    )
  }
} finally {
  server?.kill('SIGTERM')
  await new Promise((r) => setTimeout(r, 500))
  await root.unsafe(`drop database if exists ${name} with (force)`)
  await root.end()
  rmSync(dir, { recursive: true, force: true })
}
