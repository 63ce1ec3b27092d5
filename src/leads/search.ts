import { LEAD_STATUSES, type LeadStatus } from '../outbox/lead-fields.js'
import type { Sql } from '../storage/db.js'
import { isUuid } from '../storage/uuid.js'

// An account's leads: a filtered page of them, newest first, and one lead whole.

const DAY = /^\d{4}-\d{2}-\d{2}$/

export const LEAD_COLUMNS = [
  'id',
  'created_at',
  'name',
  'email',
  'company',
  'phone',
  'service',
  'budget',
  'message',
  'locale',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'key_prefix',
  'fields',
] as const
export type LeadRecord = Record<(typeof LEAD_COLUMNS)[number], string | null>
// A lead's extra fields as read from its row (null: none).
export type ExtraFields = Record<string, string> | null

// A case-insensitive substring of name, email, company or message, and the first and last days (YYYY-MM-DD, UTC),
// each '' when not filtered on; and which leads: those kept as spam (their honeypot filled), or by default the others.
// `status` and `assignee` ('me', 'nobody' or a user's id) narrow it further, '' when not filtered on; `me` is the
// viewer's user id that 'me' stands for.
export interface LeadFilter {
  q: string
  from: string
  to: string
  spam: boolean
  status: LeadStatus | ''
  assignee: string
  me: string
}

export interface Narrow {
  status?: string | null
  assignee?: string | null
  me?: string
}

// The filter from what a user typed: the search text trimmed and clipped, days that are not dates dropped; `show`
// 'spam' for the spam; a status or an assignee that is none of the known ones dropped.
export function leadFilter(
  q: string | null,
  from: string | null,
  to: string | null,
  show?: string | null,
  narrow: Narrow = {}
): LeadFilter {
  const day = (s: string | null) => (s && DAY.test(s) && !Number.isNaN(Date.parse(s)) ? s : '')
  const status = LEAD_STATUSES.find((s) => s === narrow.status) ?? ''
  const me = narrow.me ?? ''
  const a = narrow.assignee ?? ''
  const assignee = (a === 'me' && me) || a === 'nobody' || isUuid(a) ? a : ''
  return {
    q: (q ?? '').trim().slice(0, 200),
    from: day(from),
    to: day(to),
    spam: show === 'spam',
    status,
    assignee,
    me,
  }
}

// The account's leads matching the filter, as an SQL fragment.
export function matching(sql: Sql, accountId: string, f: LeadFilter) {
  const like = `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  return sql`account_id = ${accountId} and spam = ${f.spam}
    ${
      f.q
        ? sql`and (name ilike ${like} or email ilike ${like} or company ilike ${like}
                     or message ilike ${like})`
        : sql``
    }
    ${f.from ? sql`and created_at >= ${f.from}::date` : sql``}
    ${f.to ? sql`and created_at < ${f.to}::date + 1` : sql``}
    ${f.status ? sql`and status = ${f.status}` : sql``}
    ${
      f.assignee === 'nobody'
        ? sql`and assignee_id is null`
        : f.assignee
          ? sql`and assignee_id = ${f.assignee === 'me' ? f.me : f.assignee}`
          : sql``
    }`
}

// The cursor is the last row's (created_at, id), opaque to the caller: the next page is everything strictly older.
// It is sent back as text: a timestamptz parameter goes through a JS Date, which drops the microseconds.
export function cursorOf(s: string | null): [string, string] | null {
  if (!s) return null
  const [at, id] = Buffer.from(s, 'base64url').toString('utf8').split('|')
  return at && !Number.isNaN(Date.parse(at)) && isUuid(id ?? '') ? [at, id] : null
}

// The cursor of the leads older than `row` (its created_at as text, `at`, to the microsecond).
export const cursorAfter = (row: { at: string; id: string }) => Buffer.from(`${row.at}|${row.id}`).toString('base64url')

export interface LeadSummary {
  id: string
  name: string
  email: string
  company: string | null
  service: string
  created_at: Date
  status: LeadStatus
  // The assignee's email, or null: nobody.
  assignee: string | null
  // Null: nobody opened its page yet.
  opened_at: Date | null
}

// At most `size` leads older than the cursor `after` (null or unreadable: the newest), and the cursor of the page
// after them, when there is one.
export async function leadsPage(sql: Sql, accountId: string, f: LeadFilter, after: string | null, size: number) {
  const from = cursorOf(after)
  const rows = await sql<(LeadSummary & { at: string })[]>`
    select id, name, email, company, service, created_at, status, opened_at,
           (select u.email from users u where u.id = assignee_id) as assignee,
           to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
    from leads where ${matching(sql, accountId, f)}
    ${from ? sql`and (created_at, id) < (${from[0]}::text::timestamptz, ${from[1]}::uuid)` : sql``}
    order by created_at desc, id desc limit ${size + 1}`
  const leads: LeadSummary[] = rows.slice(0, size).map(({ at: _, ...lead }) => lead)
  const last = rows[size - 1]
  const next = rows.length > size ? cursorAfter(last) : null
  return { leads, next, first: from === null }
}

// The account's lead `id` with the name of the key that sent it, or null.
export async function findLead(sql: Sql, accountId: string, id: string) {
  if (!isUuid(id)) return null
  type Found = Omit<LeadRecord, 'fields'> & {
    fields: ExtraFields
    created: Date
    key_name: string | null
    spam: boolean
    status: LeadStatus
    assignee: string | null
    // Why it is spam: its honeypot field filled, or its CAPTCHA failed (null for spam from before the reason was kept).
    spam_reason: 'honeypot' | 'captcha_failed' | null
    // Its key requires a CAPTCHA and the provider could not be asked: stored and delivered unchecked.
    captcha_unverified: boolean
  }
  const [lead] = await sql<Found[]>`
    select l.*, l.created_at as created, k.name as key_name, u.email as assignee
    from leads l left join api_keys k on k.prefix = l.key_prefix left join users u on u.id = l.assignee_id
    where l.id = ${id} and l.account_id = ${accountId}`
  return lead ?? null
}

// The lead was opened: it is no longer shown as unread.
export const markOpened = (sql: Sql, accountId: string, id: string) =>
  sql`update leads set opened_at = clock_timestamp() where id = ${id} and account_id = ${accountId} and opened_at is null`
