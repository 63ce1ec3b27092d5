import type { Sql } from '../storage/db.js'
import { leadsOfPerson } from './erase.js'
import { getLead, type LeadRead } from './read.js'

// Export (issue 47): everything the service holds about one email address across an account's leads, as one JSON
// document, the same for the dashboard's download and `studio leads export`. Each lead as the API reads it, with what
// only the database sees (why it was kept as spam, the Idempotency-Key it came with, when it was
// first opened), the events written about it (their payloads as stored and sent), what each webhook receiver
// answered to them, and the mails made of them with their recipients and the mail servers' replies. The places are
// the ones erasure empties (erase.ts).

export interface PersonExport {
  email: string
  exportedAt: string
  leads: LeadExport[]
}

// Its extra fields are null rather than absent when it has none: the export names every place.
interface LeadExport extends Omit<LeadRead, 'fields'> {
  fields: Record<string, string> | null
  spamReason: string | null
  idempotencyKey: string | null
  openedAt: string | null
  events: { id: string; type: string; createdAt: string; payload: unknown }[]
  webhookAttempts: { eventId: string; endpointId: string; at: string; status: number | null; answer: string }[]
  mails: {
    eventId: string
    recipient: string
    state: string
    message: unknown
    attempts: { at: string; outcome: string; code: number | null; answer: string }[]
  }[]
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

// The account's leads from `email` (any case), oldest first; none: an empty list.
export async function exportPerson(
  sql: Sql,
  accountId: string,
  email: string,
  now = new Date()
): Promise<PersonExport> {
  const leads: LeadExport[] = []
  for (const id of await leadsOfPerson(sql, accountId, email)) {
    const lead = await getLead(sql, accountId, id)
    if (lead) leads.push(await withRecords(sql, accountId, lead))
  }
  leads.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
  return { email, exportedAt: now.toISOString(), leads }
}

async function withRecords(sql: Sql, accountId: string, lead: LeadRead): Promise<LeadExport> {
  const [row] = await sql<
    {
      spam_reason: string | null
      idempotency_key: string | null
      opened_at: Date | null
    }[]
  >`select spam_reason, idempotency_key, opened_at from leads where id = ${lead.id}`
  const events = await sql<{ id: string; type: string; created_at: Date; body: string }[]>`
    select id, type, created_at, body from events
    where account_id = ${accountId} and type like 'lead.%' and (body::jsonb -> 'data' ->> 'id') = ${lead.id}
    order by created_at, id`
  const eventIds = events.map((e) => e.id)
  const attempts = await sql<
    { event_id: string; endpoint_id: string; at: Date; status: number | null; answer: string }[]
  >`
    select event_id, endpoint_id, at, status, answer from webhook_attempt_log
    where event_id = any(${eventIds}::text[]) order by at, endpoint_id`
  const mails = await sql<{ id: string; event_id: string; recipient: string; state: string; message: unknown }[]>`
    select id::text, event_id, recipient, state, message from mail_deliveries
    where event_id = any(${eventIds}::text[]) order by id`
  const mailAttempts = await sql<
    { delivery_id: string; at: Date; outcome: string; code: number | null; answer: string }[]
  >`
    select delivery_id::text, at, outcome, code, answer from mail_attempts
    where delivery_id = any(${mails.map((m) => m.id)}::bigint[]) order by at, id`
  return {
    ...lead,
    fields: lead.fields ?? null,
    spamReason: row?.spam_reason ?? null,
    idempotencyKey: row?.idempotency_key ?? null,
    openedAt: iso(row?.opened_at ?? null),
    events: events.map((e) => ({
      id: e.id,
      type: e.type,
      createdAt: e.created_at.toISOString(),
      payload: JSON.parse(e.body),
    })),
    webhookAttempts: attempts.map((a) => ({
      eventId: a.event_id,
      endpointId: a.endpoint_id,
      at: a.at.toISOString(),
      status: a.status,
      answer: a.answer,
    })),
    mails: mails.map((m) => ({
      eventId: m.event_id,
      recipient: m.recipient,
      state: m.state,
      message: m.message,
      attempts: mailAttempts
        .filter((a) => a.delivery_id === m.id)
        .map((a) => ({ at: a.at.toISOString(), outcome: a.outcome, code: a.code, answer: a.answer })),
    })),
  }
}
