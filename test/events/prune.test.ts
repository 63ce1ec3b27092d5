import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { prune } from '../../src/events/deliveries.js'
import { listDeliveryLog } from '../../src/events/delivery-log.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { recordEvent } from '../../src/outbox/event.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

// The delivery log is kept 30 days: prune() deletes older attempts and events in batches, and keeps an old event
// whose delivery is still pending.
const { sql } = await openTestDatabase(t, await testDatabase(t))
const { accountId } = await createKey(sql, { email: 'prune@example.com' })
const endpoint = await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/p' }, true)
const DAY = 86_400_000
const now = new Date('2026-11-24T12:00:00Z')
const ago = (days: number) => new Date(now.getTime() - days * DAY)

const event = (at: Date) =>
  sql.begin((tx) =>
    recordEvent(tx as never, accountId, { type: 'key.created', data: { prefix: 'p', name: null, who: null } }, at)
  )
const attempts = (eventId: string, at: Date, n: number) => sql`
  insert into webhook_attempts (event_id, endpoint_id, at, status, duration_ms, answer)
  select ${eventId}, ${endpoint.id}, ${at}::timestamptz + g * interval '1 ms', 500, 5, 'no' from generate_series(1, ${n}) g`

t.test('attempts and events past 30 days go, in batches; the rest stays', async (t) => {
  const old = await event(ago(40))
  await sql`update webhook_deliveries set state = 'failed' where event_id = ${old.id}`
  await attempts(old.id, ago(40), 2500)
  const waiting = await event(ago(35))
  const recent = await event(ago(2))
  await attempts(recent.id, ago(31), 3)
  await attempts(recent.id, ago(1), 2)
  const deleted = await prune(sql, now)
  t.equal(deleted, 2500 + 3 + 1, 'every old attempt, and the old event (its delivery with it)')
  // The test's own events (key prefix `p`), not the key.created of the key made above.
  const left = await sql<{ id: string }[]>`
    select id from events where body::json->'data'->>'prefix' = 'p' order by created_at`
  t.same(
    left.map((e) => e.id),
    [waiting.id, recent.id],
    'an event with a pending delivery is kept'
  )
  const log = await listDeliveryLog(sql, endpoint.id)
  t.same(
    log.events.map((e) => [e.eventId, e.attempts.length]),
    [
      [recent.id, 2],
      [waiting.id, 0],
    ]
  )
  t.equal(await prune(sql, now), 0, 'nothing more to do')
})

t.test('the log pages by event, newest first', async (t) => {
  await sql`delete from events`
  const more = []
  for (let i = 0; i < 5; i++) more.push((await event(new Date(now.getTime() + i * 1000))).id)
  const first = await listDeliveryLog(sql, endpoint.id, undefined, 3)
  t.same(
    first.events.map((e) => e.eventId),
    more.slice(2).reverse()
  )
  t.ok(first.next)
  const second = await listDeliveryLog(sql, endpoint.id, first.next ?? '', 3)
  t.same(
    second.events.map((e) => e.eventId),
    more.slice(0, 2).reverse()
  )
  t.notOk(second.next, 'the last page')
  t.equal((await listDeliveryLog(sql, endpoint.id, 'garbage', 3)).events[0].eventId, more[4], 'a bad cursor: page 1')
})

t.test('the log pages by the microsecond: events of one millisecond are neither skipped nor repeated', async (t) => {
  await sql`delete from events`
  const late = await event(now)
  const early = await event(now)
  // Within one millisecond: a cursor rounded down to the millisecond would put `early` on no page.
  await sql`update events set created_at = '2026-11-24T12:00:00.123400Z' where id = ${early.id}`
  await sql`update events set created_at = '2026-11-24T12:00:00.123700Z' where id = ${late.id}`
  const seen: string[] = []
  let cursor: string | undefined
  for (let pages = 0; pages < 3; pages++) {
    const page = await listDeliveryLog(sql, endpoint.id, cursor, 1)
    seen.push(...page.events.map((e) => e.eventId))
    if (!page.next) break
    cursor = page.next
  }
  t.same(seen, [late.id, early.id])
})
