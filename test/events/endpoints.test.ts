import t from 'tap'
import { Webhook } from 'standardwebhooks'
import {
  addEndpoint,
  disableEndpoint,
  enableEndpoint,
  findEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
} from '../../src/events/endpoints.js'
import { recordEvent } from '../../src/outbox/event.js'
import { claimDue, prune } from '../../src/events/deliveries.js'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

const db = await openTestDatabase(t, await testDatabase(t))
const { sql } = db
const { accountId } = await createKey(sql, { email: 'hooks@example.com' })
const other = (await createKey(sql, { email: 'other@example.com' })).accountId

t.test('add, list, disable, enable, remove', async (t) => {
  const a = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/a', description: 'CRM' }, true)
  t.match(a.secret, /^whsec_/)
  const b = await addEndpoint(sql, { accountId: other, url: 'https://93.184.216.34/b', events: ['key.created'] }, false)
  const mine = await listEndpoints(sql, accountId)
  t.same(
    mine.map((e) => [e.id, e.url, e.events, e.description, e.disabledReason, e.lastStatus]),
    [[a.id, 'http://127.0.0.1:9/a', null, 'CRM', null, null]]
  )
  t.notOk(JSON.stringify(await listEndpoints(sql)).includes('whsec_'), 'no secret listed')
  t.equal((await listEndpoints(sql)).length, 2)
  t.ok(await disableEndpoint(sql, a.id, 'paused'))
  t.equal((await listEndpoints(sql, accountId))[0].disabledReason, 'paused')
  t.ok(await enableEndpoint(sql, a.id))
  t.equal((await listEndpoints(sql, accountId))[0].disabledReason, null)
  t.ok(await removeEndpoint(sql, b.id))
  t.notOk(await removeEndpoint(sql, b.id), 'gone')
  t.notOk(await removeEndpoint(sql, 'not-an-id'), 'not an id: not found, no error')
  t.notOk(await disableEndpoint(sql, 'x', 'why'))
  t.ok(await removeEndpoint(sql, a.id))
})

t.test('an event reaches the enabled endpoints that want its type, made after they were added', async (t) => {
  const before = await recordEvent(sql, accountId, keyEvent(), new Date())
  const all = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/all' }, true)
  const leads = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/l', events: ['lead.created'] }, true)
  const off = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/off' }, true)
  await disableEndpoint(sql, off.id, 'off')
  await addEndpoint(sql, { accountId: other, url: 'http://127.0.0.1:9/other' }, true)
  const e = await recordEvent(sql, accountId, keyEvent(), new Date())
  const claimed = await claimDue(sql, new Date(Date.now() + 1000), 30_000, 100)
  t.same(
    claimed.map((c) => [c.eventId, c.endpointId]),
    [[e.id, all.id]]
  )
  t.not(before.id, e.id)
  t.same(JSON.parse(e.body).data, keyEvent().data)
  t.same(await claimDue(sql, new Date(Date.now() + 1000), 30_000, 100), [], 'claimed once')
  t.ok(leads && off)
  await sql`delete from webhook_endpoints`
})

t.test("find: one endpoint of the account, never another account's", async (t) => {
  const { id } = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/f', description: 'one' }, true)
  t.same(
    await findEndpoint(sql, accountId, id),
    (await listEndpoints(sql, accountId)).find((e) => e.id === id)
  )
  t.equal(await findEndpoint(sql, other, id), null)
  t.equal(await findEndpoint(sql, accountId, 'nope'), null)
  t.equal(await findEndpoint(sql, accountId, crypto.randomUUID()), null)
  await sql`delete from webhook_endpoints`
})

const oneAtATime = db.mode !== 'external' && 'the embedded database runs one transaction at a time: no such race'
t.test(
  'an event that commits across a disabling leaves no delivery: enabling or pruning cancels it',
  { skip: oneAtATime },
  async (t) => {
    const { id } = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/race' }, true)
    const pending = async () =>
      (await sql`select 1 from webhook_deliveries where endpoint_id = ${id} and state = 'pending'`).length
    // The event's transaction reads the endpoint as enabled; the disabling commits before it does.
    async function race() {
      let recorded = () => {}
      let commit = () => {}
      const ready = new Promise<void>((ok) => (recorded = ok))
      const go = new Promise<void>((ok) => (commit = ok))
      const done = sql.begin(async (tx) => {
        await recordEvent(tx, accountId, keyEvent(), new Date())
        recorded()
        await go
      })
      await ready
      t.ok(await disableEndpoint(sql, id, 'paused'))
      commit()
      await done
      t.equal(await pending(), 1, 'the race leaves a pending delivery to a disabled endpoint')
    }
    await race()
    t.ok(await enableEndpoint(sql, id))
    t.equal(await pending(), 0, 'enabling cancels it: the endpoint gets what is made from then on')
    t.same(await claimDue(sql, new Date(Date.now() + 1000), 1000, 10), [], 'nothing to deliver')
    await recordEvent(sql, accountId, keyEvent(), new Date())
    t.ok(await enableEndpoint(sql, id), 'enabling an endpoint that is enabled already')
    t.equal(await pending(), 1, 'leaves its live deliveries alone')
    await sql`update webhook_deliveries set state = 'cancelled' where endpoint_id = ${id}`
    await race()
    t.ok((await prune(sql, new Date())) >= 1)
    t.equal(await pending(), 0, 'left disabled, prune cancels it')
    await sql`delete from webhook_endpoints`
  }
)

t.test('a rotated secret: both sign for 24 h, then only the new one', async (t) => {
  const { id, secret: old } = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/r' }, true)
  const now = new Date()
  const rotated = await rotateSecret(sql, id, now)
  const fresh = rotated?.secret as string
  t.match(fresh, /^whsec_/)
  t.same(rotated?.until, new Date(now.getTime() + 24 * 3600_000), 'when the old secret stops signing')
  t.equal(await rotateSecret(sql, 'nope', now), null)
  await recordEvent(sql, accountId, keyEvent(), now)
  const [during] = await claimDue(sql, new Date(now.getTime() + 1000), 1000, 10)
  t.same(during.secrets, [fresh, old])
  const [after] = await claimDue(sql, new Date(now.getTime() + 25 * 3600_000), 1000, 10)
  t.same(after.secrets, [fresh])
  t.ok(new Webhook(fresh))
})

function keyEvent() {
  return { type: 'key.created' as const, data: { prefix: 'abc', name: null, who: 'hooks@example.com' } }
}
