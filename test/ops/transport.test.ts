import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Agent, type Dispatcher, request } from 'undici'
import { lazyTransport, type Transport } from '../../src/ops/transport.js'

const server = createServer((req, res) => res.end(req.url)).listen(0, '127.0.0.1')
await new Promise((ok) => server.once('listening', ok))
t.teardown(() => server.close())
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const get = (transport: Transport, path: string) =>
  request(origin + path, { dispatcher: transport as unknown as Dispatcher }).then((r) => r.body.text())

t.test('the Agent is made once, at the first dispatch; calls made while it loads are answered', async (t) => {
  let made = 0
  const transport = lazyTransport(async () => {
    made++
    return new Agent()
  })
  t.equal(made, 0, 'nothing is loaded before a call')
  t.same(await Promise.all(['/a', '/b', '/c'].map((p) => get(transport, p))), ['/a', '/b', '/c'])
  t.equal(await get(transport, '/d'), '/d')
  t.equal(made, 1)
  await transport.close()
})

t.test('load makes the Agent before any call, once', async (t) => {
  let made = 0
  const transport = lazyTransport(async () => {
    made++
    return new Agent()
  })
  await Promise.all([transport.load(), transport.load()])
  t.equal(made, 1)
  t.equal(await get(transport, '/a'), '/a')
  t.equal(made, 1)
  await transport.close()
})

t.test('an Agent that fails to load fails each call with its error', async (t) => {
  const transport = lazyTransport(() => Promise.reject(new Error('no such chunk')))
  await t.rejects(get(transport, '/a'), { message: 'no such chunk' })
  await t.rejects(get(transport, '/b'), { message: 'no such chunk' })
})

t.test('closing a transport never used loads nothing', async (t) => {
  let made = 0
  const transport = lazyTransport(async () => {
    made++
    return new Agent()
  })
  await transport.close()
  await transport.destroy()
  t.equal(made, 0)
})
