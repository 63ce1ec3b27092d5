// Streamed completions (`stream: true`), in `npm run bench` and alone as `npm run bench:stream`: the time to the
// first byte of the answer (its status line, sent with the upstream's first event) through the service minus through
// the bare relay (bench/proxy.mjs, which relays the fake upstream's Messages stream untouched), and the CPU the server
// process spends per streamed completion of 200 deltas, the service against the relay. Interleaved rounds at 20
// connections over the same fake upstream (20 ms to its first event, then a delta every 5 ms: about 4,000 deltas a
// second in all, so that neither server is saturated and the first byte measures the path, not a queue). The
// connections start 50 ms apart, spread over one stream's second: started together, their streams stay in step, and
// every first byte waits behind the other 19 requests of its burst (about 3 ms added at p50, 4 ms even for the
// relay), which measures the burst, not the path; clients do not arrive in step. Each round also streams SHORT deltas
// (the call's max_tokens) through both: the two lengths split the CPU per completion into a part per delta and a part
// per call, which says where a gap between the two servers lies.
import { pathToFileURL } from 'node:url'

const STAGGER_MS = Number(process.env.BENCH_STREAM_STAGGER_MS ?? 50)
const messages = [{ role: 'user', content: 'Say hello' }]
// What the client sends the service, and what the service sends upstream (the relay's client sends that itself).
const viaBody = (maxTokens) => JSON.stringify({ messages, max_tokens: maxTokens, stream: true })
const relayBody = (maxTokens) =>
  JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: maxTokens, messages, stream: true })
// The fake upstream sends a call's max_tokens deltas (200 at most): LONG and SHORT deltas split each server's CPU per
// completion into a part per delta (the slope from SHORT to LONG) and a part per call (what is left at 0).
const SHORT = 10
const LONG = 200

// c: { url, keys, proxyUrl, studio, proxy, ROUNDS, load, withCpu, median, row, fmt, log }. Returns the added time to
// first byte at p50 (ms) and the CPU ratio, for the summary.
export function measureStream(c) {
  c.log('streamed completions, 200 deltas, c=20…')
  const post = (u, body, extra = {}) => ({
    url: u,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: 20,
    stagger: STAGGER_MS,
    ...extra,
  })
  const through = (n) => post(`${c.url}/api/v1/ai/completions`, viaBody(n), { keys: c.keys })
  const around = (n) => post(`${c.proxyUrl}/v1/messages`, relayBody(n))
  const [via, relayed, viaShort, relayedShort] = [[], [], [], []]
  for (let i = 0; i < c.ROUNDS; i++) {
    via.push(c.withCpu(c.studio, () => c.load(through(LONG))))
    relayed.push(c.withCpu(c.proxy, () => c.load(around(LONG))))
    viaShort.push(c.withCpu(c.studio, () => c.load(through(SHORT))))
    relayedShort.push(c.withCpu(c.proxy, () => c.load(around(SHORT))))
  }
  const added = {}
  for (const p of ['ttfb50', 'ttfb99']) {
    const [a, b] = [via, relayed].map((rs) => c.median(rs.map((r) => r[p] ?? Number.NaN)))
    added[p] = a - b
    const target = p === 'ttfb50' ? `; target ≤ 1: ${a - b <= 1 ? 'met' : 'NOT met'}` : ''
    c.row(
      `stream first byte p${p.slice(4)} ms (c=20)`,
      c.fmt(a, 3),
      c.fmt(b, 3),
      null,
      `added ${c.fmt(a - b, 3)} ms over the bare relay${target}`
    )
  }
  // All the calls a round completed (its warm-up's and those it waited for at the end too) over all its CPU.
  const perCall = (rs) => c.median(rs.map((r) => r.cpuMs / Object.values(r.all).reduce((n, x) => n + x, 0)))
  const [a, b] = [perCall(via), perCall(relayed)]
  c.row(
    'stream CPU ms per completion (200 deltas)',
    c.fmt(a, 3),
    c.fmt(b, 3),
    a / b,
    `studio vs the bare relay; target ≤ 1.5: ${a / b <= 1.5 ? 'met' : 'NOT met'}`
  )
  const [as, bs] = [perCall(viaShort), perCall(relayedShort)]
  const [da, db] = [((a - as) / (LONG - SHORT)) * 1000, ((b - bs) / (LONG - SHORT)) * 1000]
  c.row('stream CPU µs per delta (slope)', c.fmt(da, 2), c.fmt(db, 2), da / db, `${SHORT} → ${LONG} deltas`)
  const [fa, fb] = [as - (SHORT * da) / 1000, bs - (SHORT * db) / 1000]
  c.row(
    'stream CPU ms per call besides deltas',
    c.fmt(fa, 3),
    c.fmt(fb, 3),
    fa / fb,
    'what the slope leaves at 0 deltas'
  )
  const bad = [...via, ...viaShort].flatMap((r) => Object.keys(r.statuses).filter((s) => s !== '200'))
  if (bad.length) c.row('stream non-200', bad.join(','), '', null, 'errors!')
  return { ttfbAdded: added.ttfb50, cpuRatio: a / b }
}

// Alone: the service on a scratch database, the relay, one key (the rate limit is lifted), these rows only.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const h = await import('./harness.mjs')
  await h.runAlone('Streamed completions', 'relay', async (s, row) => {
    const proxy = h.start(0, ['bench/proxy.mjs', s.fakeUrl])
    const proxyUrl = `http://127.0.0.1:${(await h.firstLine(proxy)).port}`
    measureStream({ ...h, ...s, proxy, proxyUrl, row })
  })
}
