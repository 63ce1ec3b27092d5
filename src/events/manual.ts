import { randomBytes } from 'node:crypto'
import type { Sql } from '../storage/db.js'
import type { EventData } from './catalogue.js'
import { WAKE_CHANNEL } from './outbox.js'

// What a person sends by hand to one endpoint (the dashboard): a test event, or an event sent again.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// A `webhook.test` event for this one endpoint alone (whatever types it asks for), delivered like any event and
// logged with it. Returns the event's id, or null when the endpoint is not the account's.
export async function sendTest(
  sql: Sql,
  accountId: string,
  endpointId: string,
  who: string | null,
  at: Date
): Promise<string | null> {
  if (!UUID.test(endpointId)) return null
  const id = `evt_${randomBytes(16).toString('base64url')}`
  const data: EventData<'webhook.test'> = { endpointId, who }
  const body = JSON.stringify({ type: 'webhook.test', timestamp: at.toISOString(), data })
  const rows = await sql.begin(async (tx) => {
    const [endpoint] = await tx`select id from webhook_endpoints where id = ${endpointId} and account_id = ${accountId}`
    if (!endpoint) return []
    return tx`
      with event as (
        insert into events (id, account_id, type, body, created_at)
        values (${id}, ${accountId}, 'webhook.test', ${body}, ${at}) returning id
      ), delivery as (
        insert into webhook_deliveries (event_id, endpoint_id, next_at)
        select event.id, ${endpointId}, ${at} from event returning 1
      )
      select pg_notify(${WAKE_CHANNEL}, '') from delivery`
  })
  return rows.length ? id : null
}

// Sends an event again to an endpoint that had it: its delivery is due now with a fresh retry schedule, and its new
// attempts join the log. Same event, same body, same webhook-id. False when the endpoint never had that event.
export async function resend(sql: Sql, endpointId: string, eventId: string, now: Date): Promise<boolean> {
  if (!UUID.test(endpointId)) return false
  const rows = await sql`
    with again as (
      update webhook_deliveries
      set state = 'pending', attempts = 0, next_at = ${now},
          claimed_until = case when state = 'pending' then claimed_until end
      where endpoint_id = ${endpointId} and event_id = ${eventId}
      returning 1
    )
    select pg_notify(${WAKE_CHANNEL}, '') from again`
  return rows.length === 1
}
