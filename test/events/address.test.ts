import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { type Dispatcher, request } from 'undici'
import { checkedLookup, isForbiddenAddress } from '../../src/events/address.js'
import { createWebhookDispatcher } from '../../src/events/dispatcher.js'
import { checkEndpoint } from '../../src/events/endpoint-input.js'

const account = '00000000-0000-4000-8000-000000000000'

t.test('loopback, private, link-local, multicast and unspecified addresses are forbidden, v4 and v6', async (t) => {
  const forbidden = [
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a00:1',
    '::ffff:169.254.169.254',
    '[::1]',
    'fe80::1%eth0',
    'not-an-ip',
  ]
  for (const a of forbidden) t.ok(isForbiddenAddress(a), `${a} is forbidden`)
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1'])
    t.notOk(isForbiddenAddress(a), `${a} is allowed`)
})

t.test('an endpoint on a forbidden address is refused when it is added', async (t) => {
  for (const url of [
    'https://127.0.0.1/hook',
    'https://localhost/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://10.1.2.3/hook',
    'https://169.254.169.254/latest',
    'https://2130706433/hook',
  ]) {
    await t.rejects(checkEndpoint({ accountId: account, url }, false), { code: 'invalid_request' }, url)
  }
  await t.rejects(checkEndpoint({ accountId: account, url: 'http://93.184.216.34/' }, false), {
    message:
      'the URL must be https:; http: is allowed only with STUDIO_WEBHOOKS_ALLOW_PRIVATE=true (for a receiver on ' +
      'your own machine or network), set for the server too, which delivers',
  })
  const ok = await checkEndpoint(
    { accountId: account, url: 'https://93.184.216.34/h', events: ['lead.created'] },
    false
  )
  t.same(ok.events, ['lead.created'])
  const allowed = await checkEndpoint({ accountId: account, url: 'http://127.0.0.1:9/h' }, true)
  t.equal(allowed.url, 'http://127.0.0.1:9/h')
  t.equal(allowed.events, null)
})

t.test('bad endpoint input gets a clear error', async (t) => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ url: 'not a url' }, /must be a URL/],
    [{ url: 'ftp://93.184.216.34/' }, /https/],
    [{ url: 'https://u:p@93.184.216.34/' }, /credentials/],
    [{ url: 'https://93.184.216.34/', events: ['lead.deleted'] }, /event types are lead.created/],
    [{ url: 'https://93.184.216.34/', events: [] }, /at least one/],
    [{ url: 'https://93.184.216.34/', description: 'x'.repeat(501) }, /500/],
    [{ url: 'https://93.184.216.34/', accountId: 'nope' }, /account/],
  ]
  for (const [input, message] of bad) {
    const e = await checkEndpoint({ accountId: account, ...input } as never, false).catch((e) => e)
    t.match(e, { code: 'invalid_request', message }, JSON.stringify(input))
  }
})

t.test('the dispatcher connects only to checked addresses (each delivery, DNS included)', async (t) => {
  const server = createServer((_, res) => res.end('reached')).listen(0, '127.0.0.1')
  await new Promise((ok) => server.once('listening', ok))
  t.teardown(() => server.close())
  const { port } = server.address() as AddressInfo
  const strict = createWebhookDispatcher(false)
  const open = createWebhookDispatcher(true)
  t.teardown(() => Promise.all([strict.close(), open.close()]))
  for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::ffff:127.0.0.1]:${port}`]) {
    const e = await request(`${origin}/`, {
      dispatcher: strict as unknown as Dispatcher,
      method: 'POST',
      body: '{}',
    }).catch((e) => e)
    t.match(e, { code: 'WEBHOOK_FORBIDDEN_ADDRESS' }, origin)
  }
  const res = await request(`http://localhost:${port}/`, {
    dispatcher: open as unknown as Dispatcher,
    method: 'POST',
    body: '{}',
  })
  t.equal(await res.body.text(), 'reached')
})

// node:dns loads at the first lookup (not at every start), so its lookup runs later than the call: one it refuses
// must still answer the caller, through the callback, rather than become an unhandled rejection.
t.test('a lookup that node:dns refuses answers through the callback', async (t) => {
  const err = await new Promise((ok) => checkedLookup('localhost', { family: 5 as 4 }, (e) => ok(e)))
  t.match(err, { code: 'ERR_INVALID_ARG_VALUE' })
  const refused = await new Promise((ok) => checkedLookup('localhost', {}, (e) => ok(e)))
  t.match(refused, { code: 'WEBHOOK_FORBIDDEN_ADDRESS' }, 'and a lookup that works still checks the address')
})
