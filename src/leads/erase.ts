import type postgres from 'postgres'
import type { Actor } from '../audit/record.js'
import { recordAudit } from '../audit/record.js'
import { recordEvent } from '../outbox/event.js'
import type { Sql } from '../storage/db.js'

// Erasure of leads (issue 47): the person's data out of every table that holds it, in one transaction. The lead row
// goes (its extra fields and its Idempotency-Key replay are columns of it, its notes cascade); the lead's events
// become tombstones, `data` `{id, erased: true}`; their pending webhook deliveries and mails (the autoreply to the
// person included, its address blanked) are cancelled and the answers logged for them blanked (a receiver may echo
// what it was sent). The erasure itself is a lead.erased event a lead (its id alone) and one audit entry with the ids
// and the count, never the data.

export interface EraseOptions {
  // Leads of another account are left alone.
  accountId: string
  ids: string[]
  actor: Actor
}

// The ids erased: those of `ids` that are leads of the account (none: nothing is written).
export async function eraseLeads(sql: Sql, { accountId, ids, actor }: EraseOptions): Promise<string[]> {
  return await sql.begin(async (tx) => {
    const rows = await tx<{ id: string }[]>`
      delete from leads where account_id = ${accountId} and id = any(${ids}::uuid[]) returning id`
    return await erased(tx, accountId, rows, actor)
  })
}

export interface EraseOldOptions {
  accountId: string
  // Leads created before this are erased, the oldest first, at most `limit` of them.
  before: Date
  limit: number
  actor: Actor
  // What the audit entry adds to the ids and the count (the retention that erased them).
  why?: Record<string, string | number>
}

// Retention's erasure (retention.ts): up to `limit` of the account's leads created before `before`, erased as
// eraseLeads erases them, in one transaction; leads another process is erasing are skipped. The ids erased.
export async function eraseOldLeads(sql: Sql, { accountId, before, limit, actor, why }: EraseOldOptions) {
  return await sql.begin(async (tx) => {
    const rows = await tx<{ id: string }[]>`
      delete from leads where id in (
        select id from leads where account_id = ${accountId} and created_at < ${before}
        order by created_at limit ${limit} for update skip locked)
      returning id`
    return await erased(tx, accountId, rows, actor, why)
  })
}

// What follows the delete of the lead rows, in its transaction: tombstones, the lead.erased events, the audit entry.
async function erased(
  tx: postgres.TransactionSql,
  accountId: string,
  rows: { id: string }[],
  actor: Actor,
  why: Record<string, string | number> = {}
): Promise<string[]> {
  const ids = rows.map((r) => r.id)
  if (!ids.length) return []
  await tombstone(tx, accountId, ids)
  const at = new Date()
  for (const id of ids) await recordEvent(tx, accountId, { type: 'lead.erased', data: { id } }, at)
  await recordAudit(tx, actor, {
    accountId,
    action: 'lead.erased',
    target: ids.length === 1 ? ids[0] : null,
    after: { ids, count: ids.length, ...why },
  })
  return ids
}

async function tombstone(tx: postgres.TransactionSql, accountId: string, leadIds: string[]) {
  const events = await tx<{ id: string }[]>`
    update events set body = jsonb_build_object(
      'type', type, 'timestamp', body::jsonb -> 'timestamp',
      'data', jsonb_build_object('id', body::jsonb -> 'data' ->> 'id', 'erased', true))::text
    where account_id = ${accountId} and type like 'lead.%'
      and (body::jsonb -> 'data' ->> 'id') = any(${leadIds}::text[])
    returning id`
  const eventIds = events.map((e) => e.id)
  if (!eventIds.length) return
  // Releasing the claim too: an attempt in flight then finds its claim gone and logs nothing.
  await tx`
    update webhook_deliveries
    set state = case when state = 'pending' then 'cancelled' else state end, claimed_until = null,
        answer = case when answer is not null then '' end
    where event_id = any(${eventIds}::text[])`
  await tx`update webhook_attempts set answer = '' where event_id = any(${eventIds}::text[])`
  // An autoreply's recipient is the person: blanked (no later lead of theirs is then held back as a repeat).
  await tx`
    update mail_deliveries
    set state = case when state = 'pending' then 'cancelled' else state end, claimed_until = null, message = null,
        recipient = case when kind = 'autoreply' then '' else recipient end
    where event_id = any(${eventIds}::text[])`
  await tx`update mail_attempts set answer = '' where delivery_id in (
             select id from mail_deliveries where event_id = any(${eventIds}::text[]))`
}

// The ids of the account's leads from `email` (any case).
export async function leadsOfPerson(sql: Sql, accountId: string, email: string): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from leads where account_id = ${accountId} and lower(email) = lower(${email})`
  return rows.map((r) => r.id)
}

// The account of lead `id`, or null when there is no such lead.
export async function accountOfLead(sql: Sql, id: string): Promise<string | null> {
  const [row] = await sql<{ account_id: string }[]>`select account_id from leads where id = ${id}`
  return row?.account_id ?? null
}
