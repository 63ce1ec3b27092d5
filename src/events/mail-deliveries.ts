import type { Sql } from '../storage/db.js'
import type { MailMessage } from '../outbox/mail.js'
import { inBatches } from '../storage/batches.js'
import { KEEP_MS } from './deliveries.js'

// The mail deliveries' life, as the webhook deliveries' (deliveries.ts): claimed by one process (FOR UPDATE SKIP
// LOCKED, then a lease), then finished by it and logged as an attempt.

export interface ClaimedMail {
  id: string
  kind: 'lead' | 'signin' | 'invite' | 'endpoint' | 'budget' | 'autoreply' | 'assigned'
  recipient: string
  // A lead or assignee mail's event (its envelope), or the message a link mail carries.
  eventBody: string | null
  message: MailMessage | null
  attempts: number
  expiresAt: Date | null
  claimedUntil: Date
}

// Due mails, claimed until now + leaseMs. A link mail whose link expired is not sent (prune wipes it).
export const claimDueMails = (sql: Sql, now: Date, leaseMs: number, limit: number) => sql<ClaimedMail[]>`
  with due as (
    select id from mail_deliveries
    where state = 'pending' and next_at <= ${now} and (claimed_until is null or claimed_until <= ${now})
      and (expires_at is null or expires_at > ${now})
    order by next_at limit ${limit}
    for update skip locked
  ), claimed as (
    update mail_deliveries m set claimed_until = ${new Date(now.getTime() + leaseMs)} from due where m.id = due.id
    returning m.*
  )
  select c.id::text, c.kind, c.recipient, e.body as "eventBody", c.message, c.attempts, c.expires_at as "expiresAt",
    c.claimed_until as "claimedUntil"
  from claimed c left join events e on e.id = c.event_id`

export async function releaseMailClaims(sql: Sql, claims: ClaimedMail[]): Promise<void> {
  if (!claims.length) return
  await sql`
    update mail_deliveries m set claimed_until = null
    from unnest(${claims.map((c) => c.id)}::bigint[], ${claims.map((c) => c.claimedUntil.toISOString())}::timestamptz[])
      as r(id, until)
    where m.id = r.id and m.claimed_until = r.until`
}

export interface MailAttempt {
  at: Date
  code: number | null
  answer: string
}

export type MailOutcome = { kind: 'delivered' } | { kind: 'retry'; nextAt: Date } | { kind: 'failed' }

// Logs the attempt and moves the delivery on, if this process still holds the claim. A finished link mail loses its
// message (the link).
export async function finishMailAttempt(sql: Sql, c: ClaimedMail, a: MailAttempt, o: MailOutcome): Promise<void> {
  const nextAt = o.kind === 'retry' ? o.nextAt : a.at
  const state = o.kind === 'retry' ? 'pending' : o.kind
  await sql.begin(async (tx) => {
    const held = await tx`
      update mail_deliveries
      set state = ${state}, attempts = attempts + 1, next_at = ${nextAt}, claimed_until = null,
          message = case when ${state} = 'pending' then message end
      where id = ${c.id} and claimed_until = ${c.claimedUntil}
      returning 1`
    if (!held.length) return
    await tx`insert into mail_attempts (delivery_id, at, outcome, code, answer)
             values (${c.id}, ${a.at}, ${o.kind}, ${a.code}, ${a.answer})`
  })
}

// Link mails past their link's expiry lose their message (and are not sent); mails and their attempts are kept 30
// days (deliveries.ts's KEEP_MS; a lead mail also goes with its event). Returns the mails deleted.
export async function pruneMail(sql: Sql, now: Date): Promise<number> {
  const before = new Date(now.getTime() - KEEP_MS)
  await inBatches(
    (limit) => sql`
      update mail_deliveries set message = null, state = case when state = 'pending' then 'expired' else state end
      where id in (select id from mail_deliveries where message is not null and expires_at <= ${now}
                   limit ${limit} for update skip locked)`
  )
  return inBatches(
    (limit) => sql`delete from mail_deliveries where id in (
      select id from mail_deliveries where created_at < ${before} and state <> 'pending'
      limit ${limit} for update skip locked)`
  )
}

export interface MailLogLine {
  at: Date
  recipient: string
  kind: string
  outcome: string
  code: number | null
  answer: string
}

// The account's latest mail attempts, and the autoreplies skipped (outcome 'skipped', answer the reason), newest
// first: what the dashboard shows its owners.
export const mailLog = (sql: Sql, accountId: string, limit = 20) => sql<MailLogLine[]>`
  select at, recipient, kind, outcome, code, answer from (
    select a.at, m.recipient, m.kind, a.outcome, a.code, a.answer, a.id
    from mail_attempts a join mail_deliveries m on m.id = a.delivery_id
    where m.account_id = ${accountId}
    union all
    select created_at, recipient, kind, 'skipped', null, coalesce(skipped, ''), id
    from mail_deliveries where account_id = ${accountId} and state = 'skipped'
  ) log order by at desc, id desc limit ${limit}`
