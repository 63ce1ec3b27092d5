// POST /leads (and GET /leads: measureLeadPages, below), in `npm run bench` and alone as `npm run bench:leads`: leads posted at 20 connections through the
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

// The bench database, for the seeding and the counts (two connections).
const benchSql = (dbEnv) =>
  postgres(
    dbEnv.DATABASE_URL ?? {
      path: join(dbEnv.STUDIO_DATA_DIR, '.s.PGSQL.5432'),
      user: 'postgres',
      database: 'postgres',
    },
    { max: 2, onnotice: () => {} }
  )

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
  const sql = benchSql(c.dbEnv)
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

// GET /api/v1/leads, 50 a page, over LEAD_PAGES_SEEDED leads of one account (seeded, older than the POSTed ones),
// every request for another page of the whole list (all its cursors, from the top to the last page, in turn), against
// a bare node:http server answering the same pages with the same SELECTs through the same driver
// (bench/leads-page-server.mjs, the anchor), in interleaved rounds. A keyset page costs the same at any depth: a
// round of ours over the first 200 pages and one over the last 200 compare the two ends.
const LEAD_PAGES_SEEDED = Number(process.env.BENCH_LEADS ?? 100_000)
export async function measureLeadPages(c) {
  c.log(`GET /leads over ${LEAD_PAGES_SEEDED} leads, every depth, vs a bare node:http server with the same SELECT…`)
  const sql = benchSql(c.dbEnv)
  const [{ id: accountId }] = await sql`select account_id as id from users where email = 'bench@example.com'`
  await sql`insert into leads (account_id, key_prefix, name, email, service, message, company, created_at)
    select ${accountId}, 'seeded', 'Lead ' || g, 'lead' || g || '@example.com', 'web',
           'A message of some length, as a contact form would send it, number ' || g, 'Company ' || (g % 1000),
           now() - interval '1 day' - g * interval '1 minute'
    from generate_series(1, ${LEAD_PAGES_SEEDED}) g`
  await sql`analyze leads`
  const anchor = c.start(0, ['bench/leads-page-server.mjs', JSON.stringify({ db: c.dbEnv, accountId })])
  const anchorUrl = `http://127.0.0.1:${(await c.firstLine(anchor)).port}`
  // Every page's query, found by walking the list once through the service; a sample of pages must be the same
  // bytes from both servers.
  const queries = ['?limit=50']
  const auth = { authorization: `Bearer ${c.keys[0]}` }
  for (;;) {
    const r = await fetch(`${c.url}/api/v1/leads${queries.at(-1)}`, { headers: auth })
    if (r.status !== 200) throw new Error(`GET /leads${queries.at(-1)}: ${r.status}`)
    const next = (await r.json()).next_cursor
    if (!next) break
    queries.push(`?limit=50&cursor=${next}`)
  }
  for (const q of [queries[0], queries[Math.floor(queries.length / 2)], queries.at(-1)]) {
    const [ours, theirs] = await Promise.all([
      fetch(`${c.url}/api/v1/leads${q}`, { headers: auth }).then((r) => r.text()),
      fetch(`${anchorUrl}/${q}`).then((r) => r.text()),
    ])
    if (ours !== theirs) throw new Error(`the anchor's page ${q} differs from the service's`)
  }
  const get = (base, prefix, qs) => ({
    url: `${base}/`,
    paths: qs.map((q) => `${prefix}${q}`),
    keys: c.keys,
    connections: 20,
  })
  const [ours, anchors] = [[], []]
  for (let i = 0; i < c.ROUNDS; i++) {
    ours.push(c.withCpu(c.studio, () => c.fast(get(c.url, '/api/v1/leads', queries))))
    anchors.push(c.withCpu(anchor, () => c.fast(get(anchorUrl, '/', queries))))
  }
  const top = c.fast(get(c.url, '/api/v1/leads', queries.slice(0, 200)))
  const deep = c.fast(get(c.url, '/api/v1/leads', queries.slice(-200)))
  anchor.kill()
  await sql.end()
  c.steady?.('GET /leads studio', ours)
  c.steady?.('GET /leads bare SELECT', anchors)
  const oursRps = c.median(ours.map((r) => r.rps))
  const anchorRps = c.median(anchors.map((r) => r.rps))
  const rounds = (rs) => rs.map((r) => c.fmt(r.rps, 0)).join(' / ')
  c.row(
    `GET /leads pages/s (c=20, 50 a page, ${queries.length} pages) vs bare SELECT`,
    c.fmt(oursRps, 0),
    c.fmt(anchorRps, 0),
    oursRps / anchorRps,
    `node:http, the same SELECTs and JSON, no key (target ≥ 0.80); rounds ${rounds(ours)} vs ${rounds(anchors)}`,
    c.gen
  )
  const cpu = (rs) => c.median(rs.map((r) => r.cpuMs / Object.values(r.all).reduce((a, b) => a + b, 0)))
  c.row(
    'GET /leads server CPU ms per page',
    c.fmt(cpu(ours), 3),
    c.fmt(cpu(anchors), 3),
    cpu(ours) / cpu(anchors),
    '',
    c.gen
  )
  c.row(
    'GET /leads pages/s: the last 200 pages vs the first 200',
    c.fmt(deep.rps, 0),
    c.fmt(top.rps, 0),
    deep.rps / top.rps,
    `keyset: no page slower for being deep (p50 ${c.fmt(deep.p50, 2)} vs ${c.fmt(top.p50, 2)} ms)`,
    c.gen
  )
  return { pagesRps: oursRps, anchorRps }
}

// Alone: the service on a scratch database, one key (the rate limit is lifted), these rows only.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const h = await import('./harness.mjs')
  await h.runAlone('POST /leads', 'baseline', async (s, row) => {
    const c = { ...h, ...s, ...h.fastLoad(), row }
    await measureLeads(c)
    await measureLeadPages(c)
  })
}
