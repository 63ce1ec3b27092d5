import { randomBytes, randomUUID } from 'node:crypto'
import { leadMailRecipients } from '../accounts/lead-mail.js'
import type { EventOf } from '../outbox/catalogue.js'
import { envelope, eventId, fanned, recordEvent, wakeColumn, wanting } from '../outbox/event.js'
import { leadMailsOfEvents, queueMails } from '../outbox/mail.js'
import { type Sql, withTimeout } from '../storage/db.js'
import { groupCommit } from '../storage/group-commit.js'
import { recordset } from '../storage/recordset.js'
import { type AutoreplyOptions, queueAutoreply } from './autoreply.js'
import {
  insertLead,
  insertLeads,
  isSpam,
  type LeadOwner,
  type LeadToInsert,
  type NewLead,
  type StoredLead,
} from './insert.js'

export interface LeadsOptions {
  // Mail is on: each lead queues a mail per user of the account who wants one.
  mail?: boolean
  // This process's delivery worker: woken after the commit instead of by NOTIFY in it (see outbox/event.ts).
  wake?: () => void
  // The pool without the per-query deadline (db.ts), for the batches' statements.
  raw?: Sql
  // STUDIO_DB_TIMEOUT_MS: how long a request waits for its lead to be stored (its batch, or its own transaction).
  deadlineMs?: number
  // Mail is on: a lead of a key with an autoresponder queues its mail to the person who wrote (autoreply.ts).
  autoreply?: AutoreplyOptions
}

export interface Leads {
  // A lead from the API: its row, its lead.created event (none for a lead kept as spam, none for an Idempotency-Key
  // replay: the first request made it), the event's deliveries and its mails, committed before it returns.
  create(owner: LeadOwner, lead: NewLead, idempotencyKey?: string): Promise<StoredLead>
}

// The leads of this process: each created by group commit (below), or, when its batch cannot hold it, alone in its
// own transaction (createOne).
export function openLeads(sql: Sql, options: LeadsOptions = {}): Leads {
  const one = (l: LeadToInsert) => createOne(sql, options, l)
  const batch = groupCommit<LeadToInsert, StoredLead>((leads) => writeBatch(options.raw ?? sql, leads, options, one), {
    max: MAX_BATCH,
    concurrent: CONCURRENT_BATCHES,
    alongside: ALONGSIDE,
  })
  const deadlineMs = options.deadlineMs ?? 0
  // A lead that may get an autoreply goes alone: its checks take the account's lock (autoreply.ts).
  const alone = (owner: LeadOwner, lead: NewLead) => options.autoreply && owner.autoreply && !isSpam(lead)
  return {
    create: (owner, lead, key) => {
      const l = { id: randomUUID(), owner, lead, key }
      return withTimeout(alone(owner, lead) ? one(l) : batch(l), deadlineMs)
    },
  }
}

// One lead in its own transaction: its row, then (unless a replay or spam) its event with a delivery per endpoint
// that wants it, a mail per user who wants one, and the key's autoreply. The delivery worker of this process is woken after the commit.
async function createOne(
  sql: Sql,
  { mail = false, wake, autoreply }: LeadsOptions,
  l: LeadToInsert
): Promise<StoredLead> {
  const { owner, lead } = l
  const { stored, deliveries } = await sql.begin(async (tx) => {
    const stored = await insertLead(tx, owner, lead, l.key)
    if (stored.replayed || isSpam(lead)) return { stored, deliveries: 0 }
    const event = leadCreated({ id: stored.id, owner, lead }, stored.createdAt.toISOString())
    const recorded = await recordEvent(tx, owner.accountId, event, stored.createdAt, { notify: !wake })
    const recipients = leadMailRecipients(tx, owner.accountId)
    const mailed = { accountId: owner.accountId, kind: 'lead', eventId: recorded.id, at: stored.createdAt } as const
    const mails = mail ? await queueMails(tx, recipients, mailed) : 0
    const replied =
      autoreply && owner.autoreply
        ? await queueAutoreply(tx, autoreply, {
            accountId: owner.accountId,
            prefix: owner.prefix,
            autoreply: owner.autoreply,
            lead: event.data,
            captchaUnverified: lead.captchaUnverified === true,
            eventId: recorded.id,
          })
        : false
    return { stored, deliveries: recorded.deliveries + mails + (replied ? 1 : 0) }
  })
  if (deliveries) wake?.()
  return stored
}

// A lead's lead.created event: the lead as stored (`createdAt` as the API answers it), without its honeypot field
// (and spam reason: spam has no event).
// Copied field by field: `const { website, ...fields } = lead` and a spread took V8 about 6 µs a lead, this 1.
function leadCreated({ id, owner, lead }: Omit<LeadToInsert, 'key'>, createdAt: string): EventOf<'lead.created'> {
  const data: Record<string, unknown> = {}
  for (const k in lead) if (k !== 'website' && k !== 'spamReason') data[k] = lead[k as keyof typeof lead]
  data.id = id
  data.createdAt = createdAt
  data.keyPrefix = owner.prefix
  return { type: 'lead.created', data: data as EventOf<'lead.created'>['data'] }
}

// Group commit: the leads that arrive together (in one turn of the event loop, or while an earlier batch is written:
// fewer than ALONGSIDE of them, or while CONCURRENT_BATCHES are) are stored by one statement, one commit, each with
// what createOne writes. Each request is answered when the statement that holds its row has committed, so a 201 means
// the lead, its event and its mails are stored. The statement runs on the pool without the per-query deadline
// (`raw`), and each request waits for it (the batches ahead of its own included) at most `deadlineMs`, as for any
// query: past that it is answered 503 while its lead may still commit (a retry with the same Idempotency-Key gets
// that lead, not a second one).
// A lead the batch could not store goes alone, through createOne: one whose Idempotency-Key is taken (a replay,
// answered from the first lead, with no second event; a key older than 24 hours, released), and, when a row made the
// batch's statement fail (a constraint, a value PostgreSQL refuses), every lead of that batch, each in its own
// transaction, so that the failing one fails alone.
const MAX_BATCH = 100
const CONCURRENT_BATCHES = 2
// A second batch in flight needs 6 leads: measured here, a commit's own cost (PostgreSQL's ~0.2 ms of CPU for the
// commit and ~0.1 ms of the socket write) is about what 6 leads' rows and events cost it. At 20 connections this
// made each lead 12% cheaper for PostgreSQL and the rate 6% higher; at 5, the rate 11% lower (BENCHMARKS.md).
const ALONGSIDE = 6

// SQLSTATE classes of a row's fault: 22 (a value refused), 23 (a constraint).
const rowFault = (e: unknown) => /^2[23]/.test(String((e as { code?: unknown }).code))

async function writeBatch(
  sql: Sql,
  leads: LeadToInsert[],
  { mail = false, wake }: LeadsOptions,
  one: (l: LeadToInsert) => Promise<StoredLead>
) {
  let rows: { id: string; created_at: Date; deliveries: number }[]
  try {
    rows = await leadsWithEvents(sql, leads, mail, !wake)
  } catch (e) {
    if (leads.length === 1 || !rowFault(e)) throw e
    return leads.map(one)
  }
  if (rows[0]?.deliveries) wake?.()
  const byId = new Map(rows.map((r) => [r.id, r]))
  return leads.map((l) => {
    const row = byId.get(l.id)
    return row ? Promise.resolve({ id: row.id, createdAt: row.created_at, replayed: false }) : one(l)
  })
}

// Each lead's event, as one parameter of the batch's statement (storage/recordset.ts).
const leadEvents = recordset<{ lead_id: string; id: string; body: string }>(
  { lead_id: 'uuid', id: 'text', body: 'text' },
  'e'
)

// The batch's one statement. Each event's body is made here, exactly as recordEvent makes it, with a token in place
// of the lead's createdAt, which PostgreSQL replaces with the time it stores (the statement's; to the millisecond,
// as the API answers it). The token is random, so no lead's text can hold it.
function leadsWithEvents(sql: Sql, leads: LeadToInsert[], mail: boolean, notify: boolean) {
  const token = randomBytes(12).toString('base64url')
  const evented = leads.filter((l) => !isSpam(l.lead))
  const events = evented.map((l) => ({ lead_id: l.id, id: eventId(), body: envelope(leadCreated(l, token), token) }))
  const recipients = leadMailRecipients(sql, sql`event.account_id`)
  const mails = mail ? sql`, mailed as (${leadMailsOfEvents(sql, recipients)})` : sql``
  const counted = mail ? sql` + (select count(*)::int from mailed)` : sql``
  const woken = wakeColumn(sql, notify)
  return sql<{ id: string; created_at: Date; deliveries: number }[]>`
    with lead as (${insertLeads(sql, leads)}),
    event as (
      insert into events (id, account_id, type, body, created_at)
      select e.id, lead.account_id, 'lead.created',
             replace(e.body, ${token}, to_char(lead.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
             lead.created_at
      from lead
      join ${leadEvents.from(sql, events)} on e.lead_id = lead.id
      returning id, account_id, created_at
    ), ${fanned(sql, wanting(sql, 'lead.created'))}${mails}
    select lead.id, lead.created_at, (select count(*)::int from fanned)${counted} as deliveries${woken} from lead`
}
