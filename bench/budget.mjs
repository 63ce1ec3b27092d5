// What a budget costs a completion, in `npm run bench` and alone as `node bench/budget.mjs`: CPU per call of the
// server process at 200 connections for an account with a monthly budget (each call reserves its bound and the
// record settles it: one more statement per call) against the same load on an account without one (no reservation
// at all: the cached key says no budget is set, accounts/auth.ts), in interleaved rounds. Target: at most 1.2×.
import { execFileSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'

const completion = JSON.stringify({ messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 64 })

// A new ENTERPRISE key of its own account, that account given `budget` (USD) when one is named.
function accountKey(c, email, budget) {
  const run = (args) =>
    execFileSync(process.execPath, ['dist/studio.mjs', ...args], {
      env: { ...process.env, ...c.studioEnv },
      encoding: 'utf8',
    })
  const key = run(['keys', 'create', '--email', email, '--plan', 'ENTERPRISE']).trim().split('\n').at(-1)
  if (budget) run(['budget', 'set', '--email', email, budget])
  return key
}

// c: { url, studio, studioEnv, ROUNDS, SECONDS, load, withCpu, median, row, fmt, log }. Returns the CPU ratio.
export function measureBudget(c) {
  c.log('completions with and without a budget, c=200…')
  const free = accountKey(c, 'bench-nobudget@example.com')
  // Large enough never to refuse a call of the bench.
  const budgeted = accountKey(c, 'bench-budget@example.com', '999999999.00')
  const post = (key) => ({
    url: `${c.url}/api/v1/ai/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: completion,
    connections: 200,
    keys: [key],
  })
  const [without, within] = [[], []]
  for (let i = 0; i < c.ROUNDS; i++) {
    without.push(c.withCpu(c.studio, () => c.load(post(free))))
    within.push(c.withCpu(c.studio, () => c.load(post(budgeted))))
  }
  const perCall = (rs) => c.median(rs.map((r) => r.cpuMs / (r.requests / c.SECONDS) / (c.SECONDS + 1)))
  const [a, b] = [perCall(within), perCall(without)]
  const rps = (rs) => c.median(rs.map((r) => r.rps))
  c.row(
    'completions requests/s (c=200) budget vs none',
    c.fmt(rps(within), 0),
    c.fmt(rps(without), 0),
    rps(within) / rps(without),
    'one account each'
  )
  c.row(
    'completions CPU ms per call (c=200) budget vs none',
    c.fmt(a, 3),
    c.fmt(b, 3),
    a / b,
    `an account with a budget vs one without; target ≤ 1.2: ${a / b <= 1.2 ? 'met' : 'NOT met'}`
  )
  const bad = [...within, ...without].flatMap((r) => Object.keys(r.statuses).filter((s) => s !== '200'))
  if (bad.length) c.row('budget non-200', bad.join(','), '', null, 'errors!')
  return a / b
}

// Alone: the service on a scratch database, these rows only.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const h = await import('./harness.mjs')
  await h.runAlone('Completions with a budget', 'no budget', async (s, row) => {
    measureBudget({ ...h, ...s, row })
  })
}
