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

const wakeSql = (tx: postgres.ISql, notify: boolean) =>
  notify ? tx`, (select pg_notify(${WAKE_CHANNEL}, '') from fanned limit 1)` : tx``

export const eventId = () => `evt_${randomBytes(16).toString('base64url')}`

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
  const body = JSON.stringify({ type: event.type, timestamp: at.toISOString(), data: event.data })
  const wanted = endpointId
    ? tx`w.id = ${endpointId}`
    : tx`(w.event_types is null or ${event.type} = any(w.event_types))`
  const [row] = await tx<{ deliveries: number }[]>`
    with event as (
      insert into events (id, account_id, type, body, created_at)
      values (${id}, ${accountId}, ${event.type}, ${body}, ${at}) returning id
    ), fanned as (
      insert into webhook_deliveries (event_id, endpoint_id, next_at)
      select event.id, w.id, ${at} from event, webhook_endpoints w
      where w.account_id = ${accountId} and w.disabled_reason is null and ${wanted}
      returning 1
    )
    select count(*)::int as deliveries${wakeSql(tx, notify)} from fanned`
  return { id, body, deliveries: row.deliveries }
}
