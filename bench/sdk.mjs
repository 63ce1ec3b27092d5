// The OpenAI-compatible route, in `npm run bench` (its rounds joined to the native route's at 200 connections) and
// alone as `npm run bench:sdk`: `POST /api/v1/chat/completions`, OpenAI-shaped, to the same Anthropic upstream (the
// fake answers the Messages API), so that each call is translated both ways. Its CPU per call against the native
// route's in the same interleaved rounds: what the translation costs (target ≤ 1.15).
import { pathToFileURL } from 'node:url'

const CONNECTIONS = 200
const messages = [{ role: 'user', content: 'Say hello' }]

// What an OpenAI SDK sends for the native route's call: the same message and max_tokens, the alias for the model.
export function openaiRequest(url, keys) {
  return {
    url: `${url}/api/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'primary', messages, max_tokens: 64 }),
    keys,
    connections: CONNECTIONS,
  }
}

// CPU ms per call of a series of rounds (the median), over the warm-up's second too, as run.mjs counts it.
const cpuPerCall = (c, rs) => c.median(rs.map((r) => r.cpuMs / (r.requests / c.SECONDS) / (c.SECONDS + 1)))

// c: { SECONDS, median, row, fmt }; rounds: the OpenAI route's and the native route's, each with its CPU. Adds the
// rows and returns the CPU ratio for the summary.
export function sdkRows(c, sdk, native) {
  const perCall = (rs) => cpuPerCall(c, rs)
  const [rpsA, rpsB] = [sdk, native].map((rs) => c.median(rs.map((r) => r.rps)))
  c.row(
    `OpenAI route requests/s (c=${CONNECTIONS})`,
    c.fmt(rpsA, 0),
    c.fmt(rpsB, 0),
    rpsA / rpsB,
    'vs the native route'
  )
  const [a, b] = [perCall(sdk), perCall(native)]
  const each = sdk.map((r, i) => c.fmt(perCall([r]) / perCall([native[i]]))).join(', ')
  c.row(
    `OpenAI route CPU ms per call (c=${CONNECTIONS})`,
    c.fmt(a, 3),
    c.fmt(b, 3),
    a / b,
    `vs the native route (target ≤ 1.15); rounds ${each}`
  )
  const bad = sdk.flatMap((r) => Object.keys(r.statuses).filter((s) => s !== '200'))
  if (bad.length) c.row(`OpenAI route c=${CONNECTIONS} non-200`, bad.join(','), '', null, 'errors!')
  return a / b
}

// Alone: the service on a scratch database, one key (the rate limit is lifted), the native route, the OpenAI route
// and the bare relay in interleaved rounds at 200 connections.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const h = await import('./harness.mjs')
  await h.runAlone('The OpenAI-compatible route (Anthropic upstream)', 'baseline', async (s, row) => {
    const proxy = h.start(0, ['bench/proxy.mjs', s.fakeUrl])
    const proxyUrl = `http://127.0.0.1:${(await h.firstLine(proxy)).port}`
    const body = JSON.stringify({ messages, max_tokens: 64 })
    const post = (url, extra) => ({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      ...extra,
    })
    const [native, sdk, relayed] = [[], [], []]
    h.log(`native route, OpenAI route and relay at ${CONNECTIONS} connections…`)
    const via = { keys: s.keys, connections: CONNECTIONS }
    // Each of the service's rounds follows one of another process, as in `npm run bench`: the service's work left
    // over from a round (its collector's, its batched writes') falls between rounds, not on the next one. Before
    // them, a round of each route, not counted: the first calls compile the service's code.
    h.load(post(`${s.url}/api/v1/ai/completions`, via))
    h.load(openaiRequest(s.url, s.keys))
    h.load(post(`${s.fakeUrl}/v1/messages`, { connections: CONNECTIONS }))
    for (let i = 0; i < h.ROUNDS; i++) {
      native.push(h.withCpu(s.studio, () => h.load(post(`${s.url}/api/v1/ai/completions`, via))))
      relayed.push(h.withCpu(proxy, () => h.load(post(`${proxyUrl}/v1/messages`, { connections: CONNECTIONS }))))
      sdk.push(h.withCpu(s.studio, () => h.load(openaiRequest(s.url, s.keys))))
      h.load(post(`${s.fakeUrl}/v1/messages`, { connections: CONNECTIONS }))
    }
    const c = { ...h, row }
    sdkRows(c, sdk, native)
    const [n, r] = [cpuPerCall(h, native), cpuPerCall(h, relayed)]
    row(`native route CPU ms per call (c=${CONNECTIONS})`, h.fmt(n, 3), h.fmt(r, 3), n / r, 'vs the bare relay')
  })
}
