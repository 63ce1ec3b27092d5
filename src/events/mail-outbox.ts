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

// One lead mail per user of the account who wants one, in the lead's transaction; each is made from the event when
// it is sent. Returns how many; `notify: false` leaves the waking to the caller, as for the lead's event (outbox.ts).
export async function queueLeadMails(
  tx: postgres.ISql,
  accountId: string,
  eventId: string,
  at: Date,
  { notify = true }: { notify?: boolean } = {}
): Promise<number> {
  const to = await leadMailRecipients(tx, accountId)
  if (!to.length) return 0
  await tx`
    with queued as (
      insert into mail_deliveries (account_id, user_id, kind, recipient, event_id, next_at, created_at)
      select ${accountId}, r.user_id, 'lead', r.email, ${eventId}, ${at}, ${at}
      from unnest(${to.map((r) => r.userId)}::uuid[], ${to.map((r) => r.email)}::text[]) as r(user_id, email)
      returning 1
    )
    select ${notify ? tx`pg_notify(${WAKE_CHANNEL}, '')` : tx`1`} from queued limit 1`
  return to.length
}

// A sign-in link's mail (an invitation's, `kind` 'invite'), written in the link's transaction: `accounts/` calls this
// back with each new link, and `message` says it. The message (the link: a secret) is wiped once the mail is sent,
// refused or expired, and the link expires in 24 hours anyway.
export const mailLink =
  (kind: 'signin' | 'invite', message: (url: string) => MailMessage, clock: () => number): OnLink =>
  (tx, link) => {
    const { subject, text, html } = message(link.url)
    return tx`
      with queued as (
        insert into mail_deliveries (account_id, user_id, kind, recipient, message, expires_at, next_at, created_at)
        values (${link.accountId}, ${link.userId}, ${kind}, ${link.email}, ${tx.json({ subject, text, html })},
                ${link.expiresAt}, ${new Date(clock())}, ${new Date(clock())})
        returning 1
      )
      select pg_notify(${WAKE_CHANNEL}, '') from queued`
  }

export type RenderEndpointMail = (endpoint: DisabledEndpoint) => MailMessage

// A mail to each owner and admin of the account whose endpoint the delivery worker disabled, written in the
// transaction that disables it; the worker's mail lane finds it at its next round.
export const mailDisabledEndpoint =
  (render: RenderEndpointMail): OnDisabled =>
  async (tx, endpoint) => {
    const to = await ownersAndAdmins(tx, endpoint.accountId)
    if (!to.length) return
    const message = tx.json({ ...render(endpoint) })
    await tx`
      insert into mail_deliveries (account_id, user_id, kind, recipient, message, next_at, created_at)
      select ${endpoint.accountId}, r.user_id, 'endpoint', r.email, ${message}, ${endpoint.at}, ${endpoint.at}
      from unnest(${to.map((r) => r.userId)}::uuid[], ${to.map((r) => r.email)}::text[]) as r(user_id, email)`
  }
