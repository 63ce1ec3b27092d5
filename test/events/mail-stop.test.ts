import t from 'tap'
import { setLeadMailChoice } from '../../src/accounts/lead-mail.js'
import { inviteMember } from '../../src/accounts/team.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { startTestServer } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// A service stopping while its mail lane's sends wait at the SMTP server (held before its greeting: nothing sent yet)
// sends none of them after its stop, and gives every claim back at once: another process sends them without waiting
// for the 2-minute lease.
t.test('stopped with sends held at the server: none sent after the stop, every claim given back', async (t) => {
  const smtp = await smtpServer(t)
  const dbEnv = await testDatabase(t)
  const MAIL = { STUDIO_SMTP_URL: smtp.url, STUDIO_MAIL_FROM: 'studio@example.com' }
  const first = await startTestServer(t, MAIL, { dbEnv, webhooks: { pollMs: 20 } })
  const key = await first.key({ email: 'stop-owner@example.com' })
  const [{ accountId }] = await first.db.sql<{ accountId: string }[]>`
    select account_id as "accountId" from users where email = 'stop-owner@example.com'`
  // Six mails: the lane (4 at a time) holds four sends at the server and has two not yet claimed.
  for (let i = 0; i < 5; i++)
    await setLeadMailChoice(
      first.db.sql,
      await inviteMember(first.db.sql, accountId, `stop-${i}@example.com`, 'admin'),
      true
    )
  const release = smtp.hold(t)
  const res = await first.fetch('/api/v1/leads', {
    method: 'POST',
    key,
    json: { name: 'Ada', email: 'ada@example.com', service: 'consulting', message: 'Hi' },
  })
  t.equal(res.status, 201)
  await eventually(() => smtp.sessions.opened === 4, { what: 'four sends held at the server' })
  await first.close()
  release()
  await eventually(() => smtp.sessions.closed === smtp.sessions.opened, { what: 'the held connections closed' })
  t.equal(smtp.sessions.opened, 4, 'no send begun after the stop')
  t.equal(smtp.got.length, 0, 'nothing sent after the stop')

  const db = await openTestDatabase(t, dbEnv)
  const rows = await db.sql<{ state: string; attempts: number; claimed: boolean }[]>`
    select state, attempts, coalesce(claimed_until > now(), false) as claimed from mail_deliveries`
  t.equal(rows.length, 6)
  t.same(
    rows.filter((r) => r.state !== 'pending' || r.attempts !== 0 || r.claimed),
    [],
    'every mail pending, unclaimed, with no attempt'
  )
  const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from mail_attempts`
  t.equal(n, 0, 'no attempt recorded')

  await startTestServer(t, MAIL, { dbEnv, webhooks: { pollMs: 20 } })
  await eventually(() => smtp.got.length === 6, { what: 'all six sent by the next process, within the lease' })
})
