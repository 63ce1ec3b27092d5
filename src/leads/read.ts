import type { LeadStatus } from '../outbox/lead-fields.js'
import type { Sql } from '../storage/db.js'
import { type Note, notesOf } from './notes.js'
import { cursorAfter, cursorOf } from './search.js'

// An account's leads as the API reads them: a page newest first, keyset-paged on (created_at, id) so that a page is
// as fast deep in the list as at its top and leads arriving meanwhile neither repeat nor hide older ones; one lead.

export interface LeadQuery {
  limit: number
  // The previous page's next cursor: the leads strictly older than its last one.
  cursor?: string
  since?: string
  until?: string
  status?: LeadStatus
  // The email of the user the leads are given to.
  assignee?: string
  spam: boolean
}

// What a lead is sent with, as stored (null: not sent).
interface Sent {
  name: string
  email: string
  service: string
  message: string
  phone: string | null
  company: string | null
  budget: string | null
  locale: string | null
  source: string | null
}

export interface LeadRead extends Sent {
  id: string
  createdAt: string
  updatedAt: string
  utm: { source: string | null; medium: string | null; campaign: string | null } | null
  status: LeadStatus
  assignee: string | null
  keyPrefix: string
  spam: boolean
  // What it was sent with beyond the named fields; absent when nothing was.
  fields?: Record<string, string>
  // Oldest first.
  notes: Note[]
}

interface Row extends Sent {
  id: string
  at: string
  created_at: Date
  updated_at: Date | null
  utm_source: string | null
  utm_medium: string | null
  utm_campaign: string | null
  status: LeadStatus
  assignee: string | null
  key_prefix: string
  spam: boolean
  fields: Record<string, string> | null
}

// Whether `cursor` is one a page gave (the API refuses any other).
export const isCursor = (cursor: string) => cursorOf(cursor) !== null

const columns = (sql: Sql) => sql`
  l.id, to_char(l.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, l.created_at, l.updated_at,
  l.name, l.email, l.service, l.message, l.phone, l.company, l.budget, l.locale, l.source, l.utm_source,
  l.utm_medium, l.utm_campaign, l.status, u.email as assignee, l.key_prefix, l.spam, l.fields`

export async function listLeads(sql: Sql, accountId: string, q: LeadQuery) {
  const from = cursorOf(q.cursor ?? null)
  const rows = await sql<Row[]>`
    select ${columns(sql)} from leads l left join users u on u.id = l.assignee_id
    where l.account_id = ${accountId} and l.spam = ${q.spam}
    ${q.since ? sql`and l.created_at >= ${q.since}::timestamptz` : sql``}
    ${q.until ? sql`and l.created_at < ${q.until}::timestamptz` : sql``}
    ${q.status ? sql`and l.status = ${q.status}` : sql``}
    ${q.assignee ? sql`and lower(u.email) = lower(${q.assignee})` : sql``}
    ${from ? sql`and (l.created_at, l.id) < (${from[0]}::text::timestamptz, ${from[1]}::uuid)` : sql``}
    order by l.created_at desc, l.id desc limit ${q.limit + 1}`
  const page = rows.slice(0, q.limit)
  const notes = await notesOf(
    sql,
    page.map((r) => r.id)
  )
  return {
    leads: page.map((r) => read(r, notes.get(r.id) ?? [])),
    nextCursor: rows.length > q.limit ? cursorAfter(page[page.length - 1]) : null,
  }
}

export async function getLead(sql: Sql, accountId: string, id: string): Promise<LeadRead | null> {
  const [row] = await sql<Row[]>`
    select ${columns(sql)} from leads l left join users u on u.id = l.assignee_id
    where l.id = ${id} and l.account_id = ${accountId}`
  return row ? read(row, (await notesOf(sql, [id])).get(id) ?? []) : null
}

const sent = ({ name, email, service, message, phone, company, budget, locale, source }: Sent): Sent => ({
  name,
  email,
  service,
  message,
  phone,
  company,
  budget,
  locale,
  source,
})

function read(r: Row, notes: Note[]): LeadRead {
  const utm = r.utm_source ?? r.utm_medium ?? r.utm_campaign
  return {
    id: r.id,
    createdAt: r.created_at.toISOString(),
    updatedAt: (r.updated_at ?? r.created_at).toISOString(),
    ...sent(r),
    utm: utm === null ? null : { source: r.utm_source, medium: r.utm_medium, campaign: r.utm_campaign },
    status: r.status,
    assignee: r.assignee,
    keyPrefix: r.key_prefix,
    spam: r.spam,
    ...(r.fields === null ? {} : { fields: r.fields }),
    notes,
  }
}
