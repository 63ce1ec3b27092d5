import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { claimDue, prune, releaseClaims } from '../../src/events/deliveries.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { claimDueMails, pruneMail, releaseMailClaims } from '../../src/events/mail-deliveries.js'
import { recordEvent } from '../../src/outbox/event.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

// A process stopping gives back its claims in one statement each for webhooks and mails: the claims it still holds
// are free at once, one retaken by another process after its lease lapsed stays that process's. Old mails are pruned
// in batches, as the webhook log is.
const { sql } = await openTestDatabase(t, await testDatabase(t))
const { accountId } = await createKey(sql, { email: 'release@example.com' })
const now = new Date('2026-11-24T12:00:00Z')
const later = (ms: number) => new Date(now.getTime() + ms)
const keyEvent = (prefix: string) => ({ type: 'key.created' as const, data: { prefix, name: null, who: null } })

t.test('webhook claims: held ones given back, a retaken one left alone', async (t) => {
  await addEndpoint(sql, { accountId, url: 'http://127.0.0.1:9/r' }, true)
  for (const p of ['a', 'b', 'c']) await recordEvent(sql, accountId, keyEvent(p), now)
  const mine = await claimDue(sql, later(1), 1000, 10)
  t.equal(mine.length, 3)
  await sql`update webhook_deliveries set claimed_until = ${later(9000)} where event_id = ${mine[2].eventId}`
  await releaseClaims(sql, mine)
  await releaseClaims(sql, [])
  const rows = await sql<{ event_id: string; claimed_until: Date | null }[]>`
    select event_id, claimed_until from webhook_deliveries`
  const until = new Map(rows.map((r) => [r.event_id, r.claimed_until]))
  t.same([until.get(mine[0].eventId), until.get(mine[1].eventId)], [null, null])
  t.same(until.get(mine[2].eventId), later(9000), "another process's claim")
  t.equal(await prune(sql, now), 0)
})

const mail = (createdAt: Date, state = 'pending', expiresAt: Date | null = null) => ({
  account_id: accountId,
  kind: 'signin',
  recipient: 'someone@example.com',
  message: sql.json({ subject: 's', text: 't', html: 'h' }),
  expires_at: expiresAt,
  state,
  next_at: createdAt,
  created_at: createdAt,
})

t.test('mail claims: held ones given back, a retaken one left alone', async (t) => {
  await sql`insert into mail_deliveries ${sql([mail(now), mail(now)])}`
  const mine = await claimDueMails(sql, later(1), 1000, 10)
  t.equal(mine.length, 2)
  await sql`update mail_deliveries set claimed_until = ${later(9000)} where id = ${mine[1].id}`
  await releaseMailClaims(sql, mine)
  await releaseMailClaims(sql, [])
  const rows = await sql<{ id: string; claimed_until: Date | null }[]>`
    select id::text, claimed_until from mail_deliveries order by id`
  t.same(
    rows.map((r) => [r.id, r.claimed_until]),
    [
      [mine[0].id, null],
      [mine[1].id, later(9000)],
    ]
  )
})

t.test('mails past 30 days go in batches; pending ones stay; expired links lose their message', async (t) => {
  await sql`delete from mail_deliveries`
  const old = new Date(now.getTime() - 31 * 86_400_000)
  const many = Array.from({ length: 2100 }, () => mail(old, 'delivered'))
  for (let i = 0; i < many.length; i += 500) await sql`insert into mail_deliveries ${sql(many.slice(i, i + 500))}`
  await sql`insert into mail_deliveries ${sql([mail(old), mail(now, 'pending', later(-1)), mail(now, 'delivered')])}`
  t.equal(await pruneMail(sql, now), 2100)
  const left = await sql<{ state: string; message: unknown }[]>`select state, message from mail_deliveries order by id`
  t.same(
    left.map((m) => [m.state, m.message === null]),
    [
      ['pending', false],
      ['expired', true],
      ['delivered', false],
    ]
  )
  t.equal(await pruneMail(sql, now), 0, 'nothing more to do')
})
