import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { lazyDashboard, type Pages } from '../../src/dashboard/lazy.js'
import { captureLogger } from '../support/server.js'

// The dashboard's pages load at the first page request: a load that fails answers that request with an HTML error
// page (never a hang or a crash) and is tried again by the next; once loaded, the pages answer.
t.test('a failed load is an error page, and the next request loads again', async (t) => {
  const log = captureLogger()
  let loads = 0
  const loaded: Pages = {
    owns: () => true,
    handle: async (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<p>the pages</p>'),
    close: () => {},
  }
  const pages = lazyDashboard(async () => {
    loads++
    if (loads === 1) throw new Error('chunk missing')
    return loaded
  }, log)
  const server = createServer((req, res) => void pages.handle(req, res, 'req-1', []))
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dashboard/keys`

  const failed = await fetch(url)
  t.equal(failed.status, 503)
  t.match(failed.headers.get('content-type'), /^text\/html/)
  t.match(await failed.text(), 'The dashboard did not load')
  t.ok(
    log.lines.some((l) => /the dashboard did not load/.test(l)),
    'the failure is logged'
  )

  const [a, b] = await Promise.all([fetch(url), fetch(url)])
  t.same([a.status, b.status], [200, 200])
  t.equal(await a.text(), '<p>the pages</p>')
  t.equal(loads, 2, 'two requests at once share one load')
  t.ok(pages.owns('/dashboard/keys') && pages.owns('/') && !pages.owns('/api/v1/me'), 'its paths, known unloaded')
})

t.test('a load that lands after close is closed', async (t) => {
  let land: (p: Pages) => void = () => {}
  let asked: () => void = () => {}
  const loadAsked = new Promise<void>((ok) => (asked = ok))
  let closed = 0
  const load = () =>
    new Promise<Pages>((ok) => {
      land = ok
      asked()
    })
  const pages = lazyDashboard(load, captureLogger())
  const server = createServer((req, res) => void pages.handle(req, res, 'req-1', []))
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(() => server.close())
  const answer = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/dashboard`)
  await loadAsked
  pages.close()
  land({
    owns: () => true,
    handle: async (_req, res) => void res.writeHead(200).end(),
    close: () => closed++,
  })
  t.equal((await answer).status, 200, 'the request that started the load is answered')
  t.equal(closed, 1, 'the dashboard that landed after close is closed')
})
