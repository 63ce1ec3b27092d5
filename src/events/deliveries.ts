import { ownersAndAdmins } from '../accounts/team.js'
import { type MailMessage, queueMails } from '../outbox/mail.js'
import type { Sql } from '../storage/db.js'
import type { EndpointKind } from './endpoint-input.js'
import { inBatches } from '../storage/batches.js'

// The deliveries table's life: claimed by one process (FOR UPDATE SKIP LOCKED, then a lease: a process that dies
// holding a claim loses it when the lease ends), then finished by that process and logged as an attempt.

export interface Claimed {
  eventId: string
  endpointId: string
  attempts: number
  body: string
  url: string
  kind: EndpointKind
  secrets: string[]
  failingSince: Date | null
  claimedUntil: Date
}

export async function claimDue(sql: Sql, now: Date, leaseMs: number, limit: number): Promise<Claimed[]> {
  const until = new Date(now.getTime() + leaseMs)
  const rows = await sql<(Omit<Claimed, 'secrets'> & { secret: string; previous: string | null })[]>`
    with due as (
      select d.event_id, d.endpoint_id from webhook_deliveries d
      where d.state = 'pending' and d.next_at <= ${now} and (d.claimed_until is null or d.claimed_until <= ${now})
      order by d.next_at limit ${limit}
      for update of d skip locked
    )
    update webhook_deliveries d set claimed_until = ${until}
    from due, events e, webhook_endpoints w
    where d.event_id = due.event_id and d.endpoint_id = due.endpoint_id and e.id = d.event_id
      and w.id = d.endpoint_id and w.disabled_reason is null
    returning d.event_id as "eventId", d.endpoint_id as "endpointId", d.attempts, e.body, w.url, w.kind,
      w.secret, case when w.previous_secret_until > ${now} then w.previous_secret end as previous,
      w.failing_since as "failingSince", d.claimed_until as "claimedUntil"`
  return rows.map(({ secret, previous, ...d }) => ({ ...d, secrets: previous ? [secret, previous] : [secret] }))
}

// Gives claims back without counting an attempt (a process stopping), so that another process takes them at once.
export async function releaseClaims(sql: Sql, claims: Claimed[]): Promise<void> {
  if (!claims.length) return
  await sql`
    update webhook_deliveries d set claimed_until = null
    from unnest(${claims.map((c) => c.eventId)}::text[], ${claims.map((c) => c.endpointId)}::uuid[],
                ${claims.map((c) => c.claimedUntil.toISOString())}::timestamptz[]) as r(event_id, endpoint_id, until)
    where d.event_id = r.event_id and d.endpoint_id = r.endpoint_id and d.claimed_until = r.until`
}

export interface Attempt {
  at: Date
  status: number | null
  durationMs: number
  answer: string
}

export type Outcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; nextAt: Date }
  | { kind: 'failed' }
  | { kind: 'disable'; reason: string }

export interface DisabledEndpoint {
  id: string
  accountId: string
  url: string
  reason: string
  at: Date
}
// What the mail about a disabled endpoint says (the dashboard's: it knows the links).
export type RenderEndpointMail = (endpoint: DisabledEndpoint) => MailMessage

// Logs a failed attempt and moves the delivery (and its endpoint) on, if this process still holds the claim.
// Successes go through finishDelivered, many at once.
export async function finishAttempt(
  sql: Sql,
  c: Claimed,
  attempt: Attempt,
  outcome: Exclude<Outcome, { kind: 'delivered' }>,
  renderDisabled?: RenderEndpointMail
): Promise<void> {
  const state = outcome.kind === 'retry' ? 'pending' : 'failed'
  const nextAt = outcome.kind === 'retry' ? outcome.nextAt : attempt.at
  await sql.begin(async (tx) => {
    const held = await tx`
      update webhook_deliveries
      set state = ${state}, attempts = attempts + 1, next_at = ${nextAt}, claimed_until = null,
          last_status = ${attempt.status}
      where event_id = ${c.eventId} and endpoint_id = ${c.endpointId} and claimed_until = ${c.claimedUntil}
      returning 1`
    if (!held.length) return
    await tx`
      insert into webhook_attempts (event_id, endpoint_id, at, status, duration_ms, answer)
      values (${c.eventId}, ${c.endpointId}, ${attempt.at}, ${attempt.status}, ${attempt.durationMs},
              ${attempt.answer})`
    if (outcome.kind === 'disable') {
      const [w] = await tx<{ accountId: string; url: string }[]>`
        update webhook_endpoints set disabled_reason = ${outcome.reason}
        where id = ${c.endpointId} and disabled_reason is null returning account_id as "accountId", url`
      await tx`update webhook_deliveries set state = 'cancelled'
        where endpoint_id = ${c.endpointId} and state = 'pending'`
      // With mail on, a mail to each owner and admin of the account, found by the mail lane at its next round.
      if (w && renderDisabled) {
        const message = renderDisabled({ id: c.endpointId, ...w, reason: outcome.reason, at: attempt.at })
        const { accountId } = w
        await queueMails(tx, ownersAndAdmins(tx, accountId), { accountId, kind: 'endpoint', message, at: attempt.at })
      }
    } else {
      await tx`update webhook_endpoints set failing_since = coalesce(failing_since, ${attempt.at})
        where id = ${c.endpointId}`
    }
  })
}

export interface Delivered {
  claim: Claimed
  attempt: Attempt
}

// Successful attempts, many in one statement (the common case, so it costs one round trip per batch, not five per
// delivery): each delivery whose claim this process still holds is marked delivered with its attempt on its own row
// (sql/031: no webhook_attempts row); its endpoint records its last success and stops failing.
export async function finishDelivered(sql: Sql, done: Delivered[]): Promise<void> {
  const column = <T>(f: (d: Delivered) => T) => done.map(f)
  await sql`
    with r as (
      select * from unnest(
        ${column((d) => d.claim.eventId)}::text[], ${column((d) => d.claim.endpointId)}::uuid[],
        ${column((d) => d.claim.claimedUntil.toISOString())}::timestamptz[],
        ${column((d) => d.attempt.at.toISOString())}::timestamptz[], ${column((d) => d.attempt.status)}::int[],
        ${column((d) => d.attempt.durationMs)}::int[], ${column((d) => d.attempt.answer)}::text[]
      ) with ordinality as r(event_id, endpoint_id, claimed_until, at, status, duration_ms, answer, n)
    ), held as (
      update webhook_deliveries d
      set state = 'delivered', attempts = d.attempts + 1, next_at = r.at, claimed_until = null, last_status = r.status,
          duration_ms = r.duration_ms, answer = r.answer
      from r
      where d.event_id = r.event_id and d.endpoint_id = r.endpoint_id and d.claimed_until = r.claimed_until
      returning d.endpoint_id, r.at, r.status, r.n
    ), last as (
      select distinct on (endpoint_id) endpoint_id, at, status from held order by endpoint_id, at desc, n desc
    )
    update webhook_endpoints w
    set failing_since = null,
        last_delivered_status = case when w.last_delivered_at > last.at then w.last_delivered_status else last.status end,
        last_delivered_at = greatest(w.last_delivered_at, last.at)
    from last where w.id = last.endpoint_id`
}

// What is waiting: pending deliveries and the age of the oldest one's event.
export async function backlog(sql: Sql, now: Date): Promise<{ waiting: number; oldestSeconds: number }> {
  const [row] = await sql<{ waiting: number; oldest: Date | null }[]>`
    select count(*)::int as waiting, min(e.created_at) as oldest
    from webhook_deliveries d join events e on e.id = d.event_id where d.state = 'pending'`
  return {
    waiting: row.waiting,
    oldestSeconds: row.oldest ? Math.max(0, (now.getTime() - row.oldest.getTime()) / 1000) : 0,
  }
}

// The delivery log (events, deliveries, attempts, mails) is kept 30 days, deleted in batches (storage/batches.ts).
export const KEEP_MS = 30 * 86_400_000

// Events, deliveries and attempts are kept KEEP_MS; an event is kept while a delivery of it is still pending. Returns
// the rows deleted (and the stray deliveries cancelled).
export async function prune(sql: Sql, now: Date): Promise<number> {
  const before = new Date(now.getTime() - KEEP_MS)
  // Strays of a disabling race (see enableEndpoint): cancelled, so their events can go and the backlog is true.
  const strays = await inBatches(
    (limit) => sql`update webhook_deliveries set state = 'cancelled' where (event_id, endpoint_id) in (
      select d.event_id, d.endpoint_id from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
      where d.state = 'pending' and w.disabled_reason is not null limit ${limit} for update of d skip locked)`
  )
  const attempts = await inBatches(
    (limit) => sql`delete from webhook_attempts where id in (
      select id from webhook_attempts where at < ${before} limit ${limit} for update skip locked)`
  )
  const events = await inBatches(
    (limit) => sql`delete from events where id in (
      select e.id from events e where e.created_at < ${before}
        and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.state = 'pending')
      limit ${limit} for update of e skip locked)`
  )
  return strays + attempts + events
}
