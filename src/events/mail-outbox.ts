import type postgres from 'postgres'
import { leadMailRecipients } from '../accounts/lead-mail.js'
import { ownersAndAdmins } from '../accounts/team.js'
import type { OnLink } from '../accounts/signin-links.js'
import type { DisabledEndpoint, OnDisabled } from './deliveries.js'
import { WAKE_CHANNEL } from './outbox.js'

// The mail side of the outbox: mail deliveries written in the caller's transaction, woken like webhook deliveries.

export interface MailMessage {
  subject: string
  text: string
  html: string
}

// One mail delivery per recipient the fragment selects (`user_id`, `email`: `accounts/` names them), in one
// statement of the caller's transaction. Returns how many; the caller wakes the worker (or it finds them at its next
// round).
async function queueMails(
  tx: postgres.ISql,
  recipients: postgres.PendingQuery<postgres.Row[]>,
  m: { accountId: string; kind: 'lead' | 'endpoint'; eventId?: string; message?: MailMessage; at: Date }
): Promise<number> {
  const message = m.message ? tx.json({ ...m.message }) : null
  const queued = await tx`
    insert into mail_deliveries (account_id, user_id, kind, recipient, event_id, message, next_at, created_at)
    select ${m.accountId}, r.user_id, ${m.kind}, r.email, ${m.eventId ?? null}, ${message}, ${m.at}, ${m.at}
    from (${recipients}) r
    returning 1`
  return queued.length
}

// One lead mail per user of the account who wants one, in the lead's transaction; each is made from the event when
// it is sent. Returns how many; the waking is left to the caller, as for the lead's event (outbox.ts).
export const queueLeadMails = (tx: postgres.ISql, accountId: string, eventId: string, at: Date) =>
  queueMails(tx, leadMailRecipients(tx, accountId), { accountId, kind: 'lead', eventId, at })

// The lead mails of many leads' events, written by the statement that writes the events (a batch of leads:
// lead-created.ts): one per user of each event's account who wants one, as that statement's CTE, over its CTE
// `event` (id, account_id, created_at). Returns one row per mail.
export const leadMailsOfEvents = (tx: postgres.ISql) => tx`
  insert into mail_deliveries (account_id, user_id, kind, recipient, event_id, next_at, created_at)
  select event.account_id, r.user_id, 'lead', r.email, event.id, event.created_at, event.created_at
  from event cross join lateral (${leadMailRecipients(tx, tx`event.account_id`)}) r
  returning 1`

// A sign-in link's mail (an invitation's, `kind` 'invite'), written in the link's transaction: `accounts/` calls this
// back with each new link, and `message` says it. The message (the link: a secret) is wiped once the mail is sent,
// refused or expired, and the link expires in 24 hours anyway.
export const mailLink =
  (kind: 'signin' | 'invite', message: (url: string) => MailMessage, clock: () => number): OnLink =>
  async (tx, link) => {
    const { subject, text, html } = message(link.url)
    const queued = await tx`
      with queued as (
        insert into mail_deliveries (account_id, user_id, kind, recipient, message, expires_at, next_at, created_at)
        values (${link.accountId}, ${link.userId}, ${kind}, ${link.email}, ${tx.json({ subject, text, html })},
                ${link.expiresAt}, ${new Date(clock())}, ${new Date(clock())})
        returning 1
      )
      select pg_notify(${WAKE_CHANNEL}, '') from queued`
    return queued.length === 1
  }

export type RenderEndpointMail = (endpoint: DisabledEndpoint) => MailMessage

// A mail to each owner and admin of the account whose endpoint the delivery worker disabled, written in the
// transaction that disables it; the worker's mail lane finds it at its next round.
export const mailDisabledEndpoint =
  (render: RenderEndpointMail): OnDisabled =>
  async (tx, endpoint) => {
    const { accountId, at } = endpoint
    await queueMails(tx, ownersAndAdmins(tx, accountId), { accountId, kind: 'endpoint', message: render(endpoint), at })
  }
