// POST /leads, in `npm run bench` and alone as `npm run bench:leads`: leads posted at 20 connections through the
// service, against the same rows inserted by the same driver with no HTTP (bench/direct-insert.mjs) and against a bare
// HTTP server that parses the body and does one INSERT per request (bench/insert-server.mjs, the anchor), in
// interleaved rounds. The rates are wrk's (`c.fast`, `c.gen`): bench/load.mjs costs about as much CPU per lead as the
// service, on the machine that also runs PostgreSQL, and so holds both servers to its own rate. wrk leaves the requests
// in flight at its end unanswered, so the exact count is a round of its own by load.mjs, which waits for every answer:
// each 201 the service gave in it is counted against the rows it stored.
// The form endpoint (POST /forms/{prefix}, urlencoded, as a browser posts a plain <form>: the service's thank-you page
// answers it) runs in the same interleaved rounds, with a lead key of the same account opened to forms, and is rated
// against POST /leads.
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import postgres from 'postgres'

const lead = {
  name: 'Bench',
  email: 'bench@example.com',
  service: 'benchmarks',
  message: 'How fast is it?',
  company: 'Studio',
  utm: { source: 'bench' },
}
const FORM_ORIGIN = 'https://bench.example'
const { utm, ...named } = lead
const formBody = new URLSearchParams({ ...named, utm_source: utm.source })

// A lead key of the bench account opened to forms from FORM_ORIGIN (through the CLI, as an operator would): its prefix.
function formKey(studioEnv) {
  const cli = (...args) =>
    execFileSync(process.execPath, ['dist/studio.mjs', ...args], {
      env: { ...process.env, ...studioEnv },
      encoding: 'utf8',
    })
  const made = cli(
    'keys',
    'create',
    '--email',
    'bench@example.com',
    '--scopes',
    'leads:write',
    '--origins',
    FORM_ORIGIN
  )
  const prefix = made.trim().split('\n').at(-1).split('_')[1]
  cli('keys', 'form', prefix, 'on')
  return prefix
}

// c: { url, keys, dbEnv, studioEnv, studio, ROUNDS, SECONDS, load, fast, gen, withCpu, pin, start, firstLine, median, row, fmt,
// log }, and `steady` (run.mjs: each series' rounds, checked for stalls). Returns the rates and counts, for the summary.
export async function measureLeads(c) {
  c.log('POST /leads vs the bare HTTP+INSERT server and direct inserts…')
  const post = (url, extra = {}) => ({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(lead),
    connections: 20,
    ...extra,
  })
  const sql = postgres(
    c.dbEnv.DATABASE_URL ?? {
      path: join(c.dbEnv.STUDIO_DATA_DIR, '.s.PGSQL.5432'),
      user: 'postgres',
      database: 'postgres',
    },
    { max: 2, onnotice: () => {} }
  )
  const [{ id: accountId }] = await sql`select account_id as id from users where email = 'bench@example.com'`
  const floorServer = c.start(0, ['bench/insert-server.mjs', JSON.stringify({ db: c.dbEnv, accountId })])
  const floorUrl = `http://127.0.0.1:${(await c.firstLine(floorServer)).port}`
  const fast = (opts) => c.fast({ ...opts, expect: 201 })
  const formUrl = `${c.url}/forms/${formKey(c.studioEnv)}`
  const formPost = {
    url: formUrl,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: FORM_ORIGIN },
    body: formBody.toString(),
    connections: 20,
    expect: 200,
  }
  const studioRows = async () =>
    (await sql`select count(*)::int as n from leads where key_prefix not in ('direct', 'floor')`)[0].n
  const [leads, direct, floors, forms] = [[], [], [], []]
  for (let i = 0; i < c.ROUNDS; i++) {
    leads.push(c.withCpu(c.studio, () => fast(post(`${c.url}/api/v1/leads`, { keys: c.keys }))))
    forms.push(c.withCpu(c.studio, () => c.fast(formPost)))
    const [cmd, argv] = c.pin(1, process.execPath, [
      'bench/direct-insert.mjs',
      JSON.stringify({ db: c.dbEnv, accountId, lead, connections: 20, seconds: c.SECONDS }),
    ])
    const r = spawnSync(cmd, argv, { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(r.stderr)
    direct.push(JSON.parse(r.stdout))
    floors.push(c.withCpu(floorServer, () => fast(post(`${floorUrl}/`))))
  }
  floorServer.kill()
  const ratedRows = await studioRows()
  const rated201 =
    leads.reduce((n, r) => n + (r.all['201'] ?? 0), 0) + forms.reduce((n, r) => n + (r.all['200'] ?? 0), 0)
  const exact = c.load(post(`${c.url}/api/v1/leads`, { keys: c.keys }))
  const created201 = exact.all['201'] ?? 0
  const stored = (await studioRows()) - ratedRows
  const leadsRps = c.median(leads.map((r) => r.rps))
  const directRps = c.median(direct.map((r) => r.rps))
  const floorRps = c.median(floors.map((r) => r.rps))
  const formRps = c.median(forms.map((r) => r.rps))
  await sql.end()
  c.steady?.('POST /leads studio', leads)
  c.steady?.('POST /leads direct INSERT', direct)
  c.steady?.('POST /leads bare HTTP+INSERT', floors)
  c.steady?.('POST /forms/{prefix} studio', forms)
  const rounds = (rs) => rs.map((r) => c.fmt(r.rps, 0)).join(' / ')
  c.row(
    'POST /leads rows/s (c=20) vs HTTP+INSERT',
    c.fmt(leadsRps, 0),
    c.fmt(floorRps, 0),
    leadsRps / floorRps,
    `a bare HTTP server, one INSERT per request (target ≥ 1.20); rounds ${rounds(leads)} vs ${rounds(floors)}`,
    c.gen
  )
  // CPU per answer: the server process's over the round (its warm-up too) divided by every answer of the round.
  const cpu = (rs) => c.median(rs.map((r) => r.cpuMs / Object.values(r.all).reduce((a, b) => a + b, 0)))
  const cpuRatio = cpu(leads) / cpu(floors)
  c.row('POST /leads server CPU ms per lead', c.fmt(cpu(leads), 3), c.fmt(cpu(floors), 3), cpuRatio, '', c.gen)
  c.row(
    'POST /forms/{prefix} rows/s (c=20) vs POST /leads',
    c.fmt(formRps, 0),
    c.fmt(leadsRps, 0),
    formRps / leadsRps,
    `urlencoded, the thank-you page (target ≥ 0.90); rounds ${rounds(forms)} vs ${rounds(leads)}`,
    c.gen
  )
  c.row(
    'POST /forms/{prefix} server CPU ms per lead',
    c.fmt(cpu(forms), 3),
    c.fmt(cpu(leads), 3),
    cpu(forms) / cpu(leads),
    'vs POST /leads',
    c.gen
  )
  const directNote = 'the same driver inserting the same rows, no HTTP'
  c.row(
    'POST /leads rows/s (c=20) vs direct INSERT',
    c.fmt(leadsRps, 0),
    c.fmt(directRps, 0),
    leadsRps / directRps,
    directNote,
    c.gen
  )
  // The rated rounds' 201s, each stored; a few more rows than 201s are the answers wrk did not wait for.
  const everyRated = ratedRows >= rated201
  c.row(
    'POST /leads rated rounds: rows ≥ 201s',
    String(ratedRows),
    String(rated201),
    everyRated ? 1 : 0,
    everyRated
      ? `${ratedRows - rated201} more rows${c.gen === 'wrk' ? ': answers in flight when wrk stopped' : ''}`
      : 'MISSING ROWS',
    c.gen
  )
  const equal = created201 === stored
  c.row(
    'POST /leads 201s = rows',
    String(created201),
    String(stored),
    equal ? 1 : 0,
    `a round of ${c.fmt(exact.rps, 0)} rows/s that waits for every answer; ${equal ? 'every 201 stored' : 'MISMATCH'}`
  )
  return { leadsRps, directRps, floorRps, formRps, created201, stored, everyStored: everyRated && equal }
}

// Alone: the service on a scratch database, one key (the rate limit is lifted), these rows only.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const h = await import('./harness.mjs')
  await h.runAlone('POST /leads', 'baseline', (s, row) => measureLeads({ ...h, ...s, ...h.fastLoad(), row }))
}
