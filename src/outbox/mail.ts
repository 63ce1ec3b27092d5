import type postgres from 'postgres'
import { WAKE_CHANNEL } from './event.js'

// The mail side of the outbox: mail deliveries written in the caller's transaction, woken like webhook deliveries.

export interface MailMessage {
  subject: string
  text: string
  html: string
  // The autoresponder's: the address the account chose (Mail's replyTo).
  replyTo?: string
}

// The recipients of a mail, as a fragment selecting (`user_id`, `email`): `accounts/` names them.
type Recipients = postgres.PendingQuery<postgres.Row[]>

interface QueuedMail {
  accountId: string
  kind: 'lead' | 'endpoint' | 'assigned'
  eventId?: string
  message?: MailMessage
  at: Date
  // Wakes the delivery workers (NOTIFY) at the commit if a mail was queued; else the caller wakes them (or they find
  // the mails at their next round).
  notify?: boolean
}

// One mail delivery per recipient, in one statement of the caller's transaction. Returns how many.
export async function queueMails(tx: postgres.ISql, recipients: Recipients, m: QueuedMail): Promise<number> {
  const message = m.message ? tx.json({ ...m.message }) : null
  const [row] = await tx<{ n: number }[]>`
    with queued as (
      insert into mail_deliveries (account_id, user_id, kind, recipient, event_id, message, next_at, created_at)
      select ${m.accountId}, r.user_id, ${m.kind}, r.email, ${m.eventId ?? null}, ${message}, ${m.at}, ${m.at}
      from (${recipients}) r
      returning 1
    )
    select count(*)::int as n${m.notify ? tx`, (select pg_notify(${WAKE_CHANNEL}, '') from queued limit 1)` : tx``}
    from queued`
  return row.n
}

// The lead mails of many leads' events, written by the statement that writes the events (a batch of leads:
// leads/create.ts): one per recipient of each event's account, as that statement's CTE, over its CTE `event` (id,
// account_id, created_at); `recipients` names them by the column `event.account_id`. Returns one row per mail.
export const leadMailsOfEvents = (tx: postgres.ISql, recipients: Recipients) => tx`
  insert into mail_deliveries (account_id, user_id, kind, recipient, event_id, next_at, created_at)
  select event.account_id, r.user_id, 'lead', r.email, event.id, event.created_at, event.created_at
  from event cross join lateral (${recipients}) r
  returning 1`

export interface LinkMail {
  // A sign-in link's, or an invitation's.
  kind: 'signin' | 'invite'
  accountId: string
  userId: string
  email: string
  message: MailMessage
  expiresAt: Date
}

// A sign-in link's mail, written in the link's transaction, waking the delivery workers at the commit. The message
// (the link: a secret) is wiped once the mail is sent, refused or expired, and the link expires in 24 hours anyway.
export async function queueLinkMail(tx: postgres.ISql, m: LinkMail, at: Date): Promise<boolean> {
  const queued = await tx`
    with queued as (
      insert into mail_deliveries (account_id, user_id, kind, recipient, message, expires_at, next_at, created_at)
      values (${m.accountId}, ${m.userId}, ${m.kind}, ${m.email}, ${tx.json({ ...m.message })}, ${m.expiresAt},
              ${at}, ${at})
      returning 1
    )
    select pg_notify(${WAKE_CHANNEL}, '') from queued`
  return queued.length === 1
}
