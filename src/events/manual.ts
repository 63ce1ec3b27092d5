import type { Sql } from '../storage/db.js'
import { isEndpointId } from './endpoints.js'
import { recordEvent, WAKE_CHANNEL } from '../outbox/event.js'

// What a person sends by hand to one endpoint (the dashboard): a test event, or an event sent again.

const NOT_SENT = Symbol('not sent')

// A `webhook.test` event for this one endpoint alone (whatever types it asks for), delivered like any event and
// logged with it. Returns the event's id, or null when the endpoint is not the account's or is disabled (then no
// event is written).
export async function sendTest(
  sql: Sql,
  accountId: string,
  endpointId: string,
  who: string | null,
  at: Date
): Promise<string | null> {
  if (!isEndpointId(endpointId)) return null
  const event = { type: 'webhook.test', data: { endpointId, who } } as const
  try {
    return await sql.begin(async (tx) => {
      const recorded = await recordEvent(tx, accountId, event, at, { endpointId })
      // Rolled back: no event without its delivery.
      if (!recorded.deliveries) throw NOT_SENT
      return recorded.id
    })
  } catch (e) {
    if (e === NOT_SENT) return null
    throw e
  }
}

// Sends an event again to an enabled endpoint that had it: its delivery is due now with a fresh retry schedule, and
// its new attempts join the log (a success kept on the delivery's row moves to webhook_attempts first). Same event,
// same body, same webhook-id. False when the endpoint is disabled or never had that event. The endpoint's row is
// locked (FOR SHARE) so that a disabling running meanwhile either waits for this and then cancels the delivery, or
// is seen here.
export async function resend(sql: Sql, endpointId: string, eventId: string, now: Date): Promise<boolean> {
  if (!isEndpointId(endpointId)) return false
  const rows = await sql`
    with endpoint as (
      select id from webhook_endpoints where id = ${endpointId} and disabled_reason is null for share
    ), again as (
      update webhook_deliveries d
      set state = 'pending', attempts = 0, next_at = ${now},
          claimed_until = case when d.state = 'pending' then d.claimed_until end, duration_ms = null, answer = null
      from webhook_deliveries old
      where old.endpoint_id = (select id from endpoint) and old.event_id = ${eventId}
        and d.endpoint_id = old.endpoint_id and d.event_id = old.event_id
      returning old.next_at, old.last_status, old.duration_ms, old.answer
    ), kept as (
      insert into webhook_attempts (event_id, endpoint_id, at, status, duration_ms, answer)
      select ${eventId}, ${endpointId}, next_at, last_status, duration_ms, answer from again where answer is not null
    )
    select pg_notify(${WAKE_CHANNEL}, '') from again`
  return rows.length === 1
}
