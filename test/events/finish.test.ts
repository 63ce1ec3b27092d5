import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { claimDue, finishDelivered } from '../../src/events/deliveries.js'
import { listDeliveryLog } from '../../src/events/delivery-log.js'
import { addEndpoint, listEndpoints } from '../../src/events/endpoints.js'
import { resend } from '../../src/events/manual.js'
import { recordEvent } from '../../src/outbox/event.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

// Successful attempts are written many at once: each delivery whose claim is still held is marked delivered and its
// attempt logged; one whose claim lapsed and was taken by another process is left to that process.
const { sql } = await openTestDatabase(t, await testDatabase(t))
const { accountId } = await createKey(sql, { email: 'finish@example.com' })
const keyEvent = (prefix: string) => ({ type: 'key.created' as const, data: { prefix, name: null, who: null } })

t.test('a batch of successes: held claims delivered and logged, a lapsed one left alone', async (t) => {
  const e = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/hook' }, true)
  await sql`update webhook_endpoints set failing_since = now() where id = ${e.id}`
  const now = new Date()
  for (const p of ['a', 'b', 'c']) await recordEvent(sql, accountId, keyEvent(p), now)
  const claims = await claimDue(sql, new Date(now.getTime() + 1000), 1000, 10)
  t.equal(claims.length, 3)
  // The third claim lapses and another process claims it again.
  const retaken = await claimDue(sql, new Date(now.getTime() + 5000), 1000, 10)
  t.same(retaken.length, 3, 'every lapsed claim can be taken again')
  const mine = retaken.slice(0, 2)
  const at = new Date(now.getTime() + 5100)
  const done = [...mine, claims[2]].map((claim, i) => ({
    claim,
    attempt: { at, status: 200 + i, durationMs: 3 + i, answer: `ok ${i}` },
  }))
  await finishDelivered(sql, done)
  const rows = await sql<{ event_id: string; state: string; attempts: number; last_status: number | null }[]>`
    select event_id, state, attempts, last_status from webhook_deliveries`
  const byEvent = new Map(rows.map((r) => [r.event_id, r]))
  for (const [i, c] of mine.entries())
    t.match(byEvent.get(c.eventId), { state: 'delivered', attempts: 1, last_status: 200 + i })
  t.match(byEvent.get(claims[2].eventId), { state: 'pending', attempts: 0, last_status: null }, 'a lost claim')
  const logged = await sql<{ event_id: string; status: number; duration_ms: number; answer: string }[]>`
    select event_id, status, duration_ms, answer from webhook_attempt_log order by status`
  t.same(
    logged.map((a) => [a.event_id, a.status, a.duration_ms, a.answer]),
    mine.map((c, i) => [c.eventId, 200 + i, 3 + i, `ok ${i}`])
  )
  const [endpoint] = await listEndpoints(sql, accountId)
  t.equal(endpoint.lastStatus, 201)
  const [{ failing_since }] = await sql`select failing_since from webhook_endpoints where id = ${e.id}`
  t.equal(failing_since, null, 'the endpoint no longer failing')
})

// A success is kept on its delivery's row (sql/031), not as a webhook_attempts row: the log, the endpoint's last
// attempt and a resend still show every attempt.
t.test('a success kept on its row: logged, last on its endpoint, kept when the event is sent again', async (t) => {
  const e = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/again' }, true)
  const { id } = await recordEvent(sql, accountId, keyEvent('again'), new Date())
  const deliver = async (at: Date, status: number, answer: string) => {
    const [claim] = (await claimDue(sql, at, 1000, 10)).filter((c) => c.endpointId === e.id)
    await finishDelivered(sql, [{ claim, attempt: { at, status, durationMs: 4, answer } }])
  }
  const first = new Date(Date.now() + 1000)
  await deliver(first, 200, 'first')
  const [{ n }] = await sql`select count(*)::int as n from webhook_attempts where endpoint_id = ${e.id}`
  t.equal(n, 0, 'no attempt row for a success')
  const [endpoint] = (await listEndpoints(sql, accountId)).filter((w) => w.id === e.id)
  t.match(endpoint, { lastStatus: 200, lastAttemptAt: first })
  t.ok(await resend(sql, e.id, id, first))
  const second = new Date(first.getTime() + 1000)
  await deliver(second, 204, 'second')
  const { events } = await listDeliveryLog(sql, e.id)
  const logged = events.map((l) => [l.eventId, l.state, l.attempts.map((a) => [a.status, a.answer, a.at.getTime()])])
  const both = [
    [204, 'second', second.getTime()],
    [200, 'first', first.getTime()],
  ]
  t.same(logged, [[id, 'delivered', both]], 'both attempts, newest first')
})
