// The peer a user would pick instead of the service: the Portkey AI Gateway (`@portkey-ai/gateway`, its Node server),
// run on its own process, headless and in production mode as one would deploy it, in front of the same fake
// upstream. It is sent what its users send: an OpenAI-shaped chat completion, which it translates to the Anthropic
// Messages API at the host named by `x-portkey-custom-host`, and the answer back.
import { fileURLToPath } from 'node:url'

// Resolved when started, not at import: bench/run.mjs imports this before it installs the bench's own packages.
const server = () => fileURLToPath(import.meta.resolve('@portkey-ai/gateway/build/start-server.js'))

// h: the harness ({ startLogged, freePort, work }). Resolves once the gateway answers on its port.
export async function startPortkey(h, fakeUrl) {
  const port = await h.freePort()
  const child = h.startLogged(
    0,
    [server(), `--port=${port}`, '--headless'],
    { NODE_ENV: 'production' },
    `${h.work}/portkey.log`
  )
  const url = `http://127.0.0.1:${port}`
  const end = Date.now() + 30_000
  for (;;) {
    try {
      if ((await fetch(`${url}/`)).ok) break
    } catch {}
    if (Date.now() > end) throw new Error('the Portkey gateway never answered')
    await new Promise((r) => setTimeout(r, 20))
  }
  const request = {
    url: `${url}/v1/chat/completions`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-bench',
      'x-portkey-provider': 'anthropic',
      'x-portkey-custom-host': `${fakeUrl}/v1`,
    },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Say hello' }],
      max_tokens: 64,
    }),
  }
  return { child, request }
}
