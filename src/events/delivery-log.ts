import type { Sql } from '../storage/db.js'

// An endpoint's delivery log: the events it was sent, newest first, each with its delivery's state and every attempt
// (time, status, duration, the first bytes of the answer). Kept 30 days (deliveries.ts prunes).

interface LoggedAttempt {
  at: Date
  // null: no answer (refused, timed out, redirected elsewhere: the answer says which).
  status: number | null
  durationMs: number
  answer: string
}

export interface LoggedEvent {
  eventId: string
  type: string
  createdAt: Date
  state: 'pending' | 'delivered' | 'failed' | 'cancelled'
  nextAt: Date
  attempts: LoggedAttempt[]
}

export interface LogPage {
  events: LoggedEvent[]
  // The cursor of the next (older) page, or null on the last one.
  next: string | null
}

const ANSWER_CHARS = 300
// The last event's created_at to the microsecond (as PostgreSQL stores it; a JS Date would round it to the
// millisecond, skipping or repeating events of the same millisecond across pages) and its id.
const CURSOR = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)~(evt_[\w-]{1,64})$/

// One page of `limit` events, older than `cursor` (from a previous page's `next`) when given; a bad cursor is the
// first page.
export async function listDeliveryLog(sql: Sql, endpointId: string, cursor?: string, limit = 25): Promise<LogPage> {
  const c = CURSOR.exec(cursor ?? '')
  // As text: the driver would send a timestamptz parameter through a JS Date, dropping the microseconds.
  const older = c ? sql`and (e.created_at, e.id) < (${c[1]}::text::timestamptz, ${c[2]})` : sql``
  const rows = await sql<(Omit<LoggedEvent, 'attempts'> & { attempts: LoggedAttempt[]; cursor: string })[]>`
    select e.id as "eventId", e.type, e.created_at as "createdAt", d.state, d.next_at as "nextAt",
      coalesce((
        select json_agg(json_build_object('at', a.at, 'status', a.status, 'durationMs', a.duration_ms,
                                          'answer', left(a.answer, ${ANSWER_CHARS})) order by a.at desc, a.id desc nulls first)
        from webhook_attempt_log a where a.event_id = d.event_id and a.endpoint_id = d.endpoint_id
      ), '[]'::json) as attempts,
      to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z~"') || e.id as cursor
    from webhook_deliveries d join events e on e.id = d.event_id
    where d.endpoint_id = ${endpointId} ${older}
    order by e.created_at desc, e.id desc
    limit ${limit + 1}`
  const events = rows.slice(0, limit).map(({ cursor, ...r }) => ({
    ...r,
    attempts: r.attempts.map((a) => ({ ...a, at: new Date(a.at) })),
  }))
  return { events, next: (rows.length > limit && rows[limit - 1]?.cursor) || null }
}
