import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { addEndpoint, disableEndpoint, enableEndpoint } from '../../src/events/endpoints.js'
import { resend, sendTest } from '../../src/events/manual.js'
import { recordEvent } from '../../src/outbox/event.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

// A disabled endpoint gets no test event and no resend: nothing is left pending for it either, which would be
// delivered once it is enabled again (enabled again, an endpoint receives the events made from then on).
const { sql } = await openTestDatabase(t, await testDatabase(t))
const { accountId } = await createKey(sql, { email: 'manual@example.com' })
const keyEvent = { type: 'key.created' as const, data: { prefix: 'p', name: null, who: null } }
const states = (endpointId: string) => sql<{ type: string; state: string }[]>`
  select e.type, d.state from webhook_deliveries d join events e on e.id = d.event_id
  where d.endpoint_id = ${endpointId} order by e.type`

t.test('a disabled endpoint: no test event, no resend, nothing waiting for it when enabled again', async (t) => {
  const e = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/m' }, true)
  const sent = await recordEvent(sql, accountId, keyEvent, new Date())
  await sql`update webhook_deliveries set state = 'delivered' where event_id = ${sent.id}`
  await disableEndpoint(sql, e.id, 'disabled by hand')
  t.equal(await sendTest(sql, accountId, e.id, 'who@example.com', new Date()), null, 'no test event')
  t.equal(await resend(sql, e.id, sent.id, new Date()), false, 'no resend')
  await enableEndpoint(sql, e.id)
  t.same(await states(e.id), [{ type: 'key.created', state: 'delivered' }], 'nothing pending')
  t.same(await sql`select id from events where type = 'webhook.test'`, [], 'no test event written')
  t.ok(await sendTest(sql, accountId, e.id, 'who@example.com', new Date()), 'enabled: a test event')
  t.ok(await resend(sql, e.id, sent.id, new Date()), 'enabled: resent')
  t.same(await states(e.id), [
    { type: 'key.created', state: 'pending' },
    { type: 'webhook.test', state: 'pending' },
  ])
})

t.test("another account's endpoint gets no test event", async (t) => {
  const other = await createKey(sql, { email: 'other@example.com' })
  const e = await addEndpoint(sql, { accountId: other.accountId, url: 'http://127.0.0.1:9/o' }, true)
  t.equal(await sendTest(sql, accountId, e.id, null, new Date()), null)
  t.equal(await sendTest(sql, accountId, 'not-an-id', null, new Date()), null)
  t.same(await states(e.id), [])
})
