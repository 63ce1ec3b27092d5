import { randomBytes } from 'node:crypto'
import type postgres from 'postgres'
import type { EventOf, EventType } from './catalogue.js'

export const WAKE_CHANNEL = 'studio_webhooks'

export interface RecordedEvent {
  id: string
  body: string
  // How many deliveries it made (one per endpoint that wants it).
  deliveries: number
}

type Fragment = postgres.PendingQuery<postgres.Row[]>

export const eventId = () => `evt_${randomBytes(16).toString('base64url')}`

// An event's body: the Standard Webhooks envelope, exactly as every attempt will send it.
export const envelope = <T extends EventType>(event: EventOf<T>, timestamp: string) =>
  JSON.stringify({ type: event.type, timestamp, data: event.data })

// The endpoints (`w`) that want events of `type`: those that name it and those that name no type (all of them).
export const wanting = (tx: postgres.ISql, type: EventType) =>
  tx`(w.event_types is null or ${type} = any(w.event_types))`

// The CTE `fanned`, over the statement's CTE `event` (id, account_id, created_at): one delivery, due at once, per
// enabled endpoint (`w`) of each event's account that `wanted` picks; a row each.
export const fanned = (tx: postgres.ISql, wanted: Fragment) => tx`fanned as (
    insert into webhook_deliveries (event_id, endpoint_id, next_at)
    select event.id, w.id, event.created_at from event join webhook_endpoints w on w.account_id = event.account_id
    where w.disabled_reason is null and ${wanted}
    returning 1
  )`

// A column of the statement's select that wakes the delivery workers (NOTIFY, sent at the commit) if `fanned` made
// a delivery; nothing without `notify`.
export const wakeColumn = (tx: postgres.ISql, notify: boolean) =>
  notify ? tx`, (select pg_notify(${WAKE_CHANNEL}, '') from fanned limit 1)` : tx``

// Writes an event in the caller's transaction (`tx`), with one pending delivery per enabled endpoint of the account
// that wants its type, and wakes the delivery workers (NOTIFY) once it commits. The body is the envelope exactly as
// every attempt will send it. `notify: false` leaves the waking to the caller: a process with a delivery worker of
// its own wakes it after the commit, which spares the commit NOTIFY's lock (PostgreSQL commits notifying
// transactions one at a time, each waiting for the one before to reach the disk); other processes' workers find
// the delivery at their next poll. `endpointId` sends the event to that one endpoint of the account alone, whatever
// types it asks for (a test event), if it is enabled.
export async function recordEvent<T extends EventType>(
  tx: postgres.ISql,
  accountId: string,
  event: EventOf<T>,
  at: Date,
  { notify = true, endpointId }: { notify?: boolean; endpointId?: string } = {}
): Promise<RecordedEvent> {
  const id = eventId()
  const body = envelope(event, at.toISOString())
  const wanted = endpointId ? tx`w.id = ${endpointId}` : wanting(tx, event.type)
  const [row] = await tx<{ deliveries: number }[]>`
    with event as (
      insert into events (id, account_id, type, body, created_at)
      values (${id}, ${accountId}, ${event.type}, ${body}, ${at}) returning id, account_id, created_at
    ), ${fanned(tx, wanted)}
    select count(*)::int as deliveries${wakeColumn(tx, notify)} from fanned`
  return { id, body, deliveries: row.deliveries }
}
