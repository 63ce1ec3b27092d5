import type postgres from 'postgres'
import type { Autoreply } from '../accounts/key-autoreply.js'
import type { EventData } from '../outbox/catalogue.js'
import type { MailMessage } from '../outbox/mail.js'

// The autoresponder's mail to the person who wrote, queued in the lead's transaction (create.ts), for a lead that is
// not spam, of a key that has one. Never an open relay: a lead whose CAPTCHA could not be checked gets none, an address
// gets at most one per account in 24 hours, a key sends at most `dailyLimit` a day (UTC), counted over its line of
// rotations (the newest key and the keys counting as it), so that rotating starts no fresh day. A mail not sent is a
// 'skipped' row saying why, so that the mail log shows it; both carry the lead's event, so erasure finds them.

export interface AutoreplyOptions {
  // The mail of `autoreply` for `lead`, every value escaped in its HTML (dashboard/mail.ts).
  render: (autoreply: Autoreply, lead: EventData<'lead.created'>) => MailMessage
  // STUDIO_AUTOREPLY_DAILY_LIMIT.
  dailyLimit: number
}

type Skipped = 'captcha_unverified' | 'recent' | 'daily_limit'

interface Queued {
  accountId: string
  prefix: string
  autoreply: Autoreply
  lead: EventData<'lead.created'>
  captchaUnverified: boolean
  eventId: string
}

// Queues the mail (true) or its skipped row. The account's autoreplies are taken one at a time (a lock for the
// transaction), so that two leads at once from one address, or at the key's limit, cannot both pass the checks.
export async function queueAutoreply(tx: postgres.ISql, o: AutoreplyOptions, q: Queued): Promise<boolean> {
  const skipped = q.captchaUnverified ? 'captcha_unverified' : await limited(tx, o, q)
  const replyTo = q.autoreply.replyTo
  const message = skipped ? null : tx.json({ ...o.render(q.autoreply, q.lead), ...(replyTo && { replyTo }) })
  await tx`
    insert into mail_deliveries (account_id, kind, recipient, event_id, key_prefix, message, state, skipped, next_at,
                                 created_at)
    values (${q.accountId}, 'autoreply', ${q.lead.email}, ${q.eventId}, ${q.prefix}, ${message},
            ${skipped ? 'skipped' : 'pending'}, ${skipped}, now(), now())`
  return skipped === null
}

async function limited(tx: postgres.ISql, o: AutoreplyOptions, q: Queued): Promise<Skipped | null> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`autoreply ${q.accountId}`}, 0))`
  const [row] = await tx<{ recent: boolean; today: number }[]>`
    select exists (
             select from mail_deliveries
             where account_id = ${q.accountId} and kind = 'autoreply' and state <> 'skipped'
               and lower(recipient) = lower(${q.lead.email}) and created_at > now() - interval '24 hours'
           ) as recent,
           (select count(*)::int from mail_deliveries
            where key_prefix in (
                    select k.prefix from api_keys k join api_keys me on me.prefix = ${q.prefix}
                    where k.prefix = coalesce(me.counts_as, me.prefix) or k.counts_as = coalesce(me.counts_as, me.prefix)
                  )
              and kind = 'autoreply' and state <> 'skipped'
              and created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC') as today`
  if (row.recent) return 'recent'
  return row.today >= o.dailyLimit ? 'daily_limit' : null
}
