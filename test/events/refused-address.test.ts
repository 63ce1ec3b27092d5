import t from 'tap'
import { cliOn } from '../support/cli.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// A receiver on the operator's own machine, added by the CLI with STUDIO_WEBHOOKS_ALLOW_PRIVATE=true while the server
// runs without it: the server refuses each delivery for its address, says so in its log at warn, and the list and the
// delivery log show `refused: private address`, not the receiver's silence.

const dbEnv = await testDatabase(t)
const s = await startTestServer(t, {}, { dbEnv, webhooks: { pollMs: 20 } })

const cli = cliOn(dbEnv)
// The CLI where the setting is on, as on the operator's own machine.
const allowingCli = cliOn({ ...dbEnv, STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' })

t.test('a delivery refused for its address is logged and shown as refused, never sent', async (t) => {
  const email = 'own-network@example.com'
  const owner = await signInWithLink(s.url, await signinLink(dbEnv, { STUDIO_PUBLIC_URL: s.url }, ['--email', email]))
  const r = await receiver(t)
  const added = await allowingCli(['webhooks', 'add', '--email', email, '--url', r.url])
  t.equal(added.code, 0, added.err.join('\n'))
  const id = /endpoint ([0-9a-f-]{36})/.exec(added.out[0])![1]
  const page = `/dashboard/webhooks/${id}`
  t.equal((await owner.submit(page, `${page}/test`)).status, 303)

  const warned = await eventually(() => s.log.lines.find((l) => l.includes('webhook delivery refused')), {
    what: 'the warning',
  })
  const line = JSON.parse(warned)
  t.equal(line.level, 'warn')
  t.match(line.msg, 'STUDIO_WEBHOOKS_ALLOW_PRIVATE=true')
  t.match(line.why, /resolves to 127\.0\.0\.1, a loopback/)
  t.equal(r.got.length, 0, 'the receiver got nothing')

  const list = await cli(['webhooks', 'list', '--email', email])
  t.equal(list.out[1].split('\t').at(-1), 'refused: private address')
  const log = (await owner.get(page)).text
  t.match(log, '<span class="badge revoked">refused: private address</span>')
  t.notMatch(log, 'no answer')
})
