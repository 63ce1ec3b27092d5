import type postgres from 'postgres'
import type { Sql } from '../storage/db.js'
import { isUuid } from '../storage/uuid.js'
import type { EventType } from './catalogue.js'
import { type EndpointInput, type EndpointKind, checkEndpoint } from './endpoint-input.js'
import { newSecret } from './signature.js'

export interface Endpoint {
  id: string
  accountId: string
  url: string
  kind: EndpointKind
  events: EventType[] | null
  description: string | null
  disabledReason: string | null
  createdAt: Date
  // The status of the last attempt to deliver to it (null: no answer, or none yet), and when it was.
  lastStatus: number | null
  lastAttemptAt: Date | null
}

// How long the old secret still signs after a rotation.
const ROTATION_OVERLAP_MS = 24 * 3_600_000
// Whether `id` can be an endpoint's id: anything else is no endpoint.
export const isEndpointId = isUuid

// A new endpoint of the account; its secret is returned here and never shown again.
export async function addEndpoint(sql: Sql, input: EndpointInput, allowPrivate: boolean) {
  const e = await checkEndpoint(input, allowPrivate)
  const secret = newSecret()
  const [row] = await sql<{ id: string }[]>`
    insert into webhook_endpoints (account_id, url, kind, event_types, description, secret)
    values (${e.accountId}, ${e.url}, ${e.kind}, ${e.events}, ${e.description}, ${secret}) returning id`
  return { id: row.id, secret }
}

// The endpoints (with their last attempt) that `where` selects, `w` being webhook_endpoints.
const selectEndpoints = (sql: Sql, where: postgres.PendingQuery<postgres.Row[]>) => sql<Endpoint[]>`
  select w.id, w.account_id as "accountId", w.url, w.kind, w.event_types as events, w.description,
         w.disabled_reason as "disabledReason", w.created_at as "createdAt",
         last.status as "lastStatus", last.at as "lastAttemptAt"
  from webhook_endpoints w
  left join lateral (
    select a.status, a.at from webhook_attempts a where a.endpoint_id = w.id order by a.at desc, a.id desc limit 1
  ) last on true
  where ${where}
  order by w.created_at, w.id`

export const listEndpoints = (sql: Sql, accountId?: string) =>
  selectEndpoints(sql, accountId === undefined ? sql`true` : sql`w.account_id = ${accountId}`)

// One endpoint of the account, or null (none with that id, or another account's).
export async function findEndpoint(sql: Sql, accountId: string, id: string): Promise<Endpoint | null> {
  if (!isEndpointId(id)) return null
  const [row] = await selectEndpoints(sql, sql`w.id = ${id} and w.account_id = ${accountId}`)
  return row ?? null
}

export async function removeEndpoint(sql: Sql, id: string): Promise<boolean> {
  if (!isEndpointId(id)) return false
  return (await sql`delete from webhook_endpoints where id = ${id} returning id`).length === 1
}

// Disabling cancels the endpoint's pending deliveries; enabled again, it receives the events made from then on.
export async function disableEndpoint(sql: Sql, id: string, reason: string): Promise<boolean> {
  if (!isEndpointId(id)) return false
  const rows = await sql`
    with endpoint as (
      update webhook_endpoints set disabled_reason = ${reason} where id = ${id} returning id
    ), cancelled as (
      update webhook_deliveries set state = 'cancelled'
      where endpoint_id in (select id from endpoint) and state = 'pending'
    )
    select id from endpoint`
  return rows.length === 1
}

// Deliveries still pending for a disabled endpoint were made by an event whose transaction read the endpoint as
// enabled and committed after the disabling cancelled the rest (no lock orders the two: a lock per lead on its
// endpoints would serialize the leads). Enabling cancels them first, so the endpoint gets only what is made from
// then on; prune() cancels them for endpoints left disabled.
export async function enableEndpoint(sql: Sql, id: string): Promise<boolean> {
  if (!isEndpointId(id)) return false
  const rows = await sql`
    with stray as (
      update webhook_deliveries set state = 'cancelled' where endpoint_id = ${id} and state = 'pending'
    )
    update webhook_endpoints set disabled_reason = null, failing_since = null where id = ${id} returning id`
  return rows.length === 1
}

// A new secret, and when the old one stops signing: until then (24 hours) both sign (both signatures in
// webhook-signature).
export async function rotateSecret(sql: Sql, id: string, now: Date): Promise<{ secret: string; until: Date } | null> {
  if (!isEndpointId(id)) return null
  const secret = newSecret()
  const [row] = await sql<{ until: Date }[]>`
    update webhook_endpoints
    set previous_secret = secret, secret = ${secret},
        previous_secret_until = ${new Date(now.getTime() + ROTATION_OVERLAP_MS)}
    where id = ${id} returning previous_secret_until as until`
  return row ? { secret, until: row.until } : null
}
