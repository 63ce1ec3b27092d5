import type postgres from 'postgres'
import { type Actor, type AuditAction, audit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'
import { isUuid } from '../storage/uuid.js'
import type { EventType } from '../outbox/catalogue.js'
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
  // The status of the last attempt to deliver to it (null: no answer, or none yet), when it was, and the start of
  // its answer (which says why there was no status: address.ts's unansweredAs).
  lastStatus: number | null
  lastAttemptAt: Date | null
  lastAnswer: string | null
}

// How long the old secret still signs after a rotation.
const ROTATION_OVERLAP_MS = 24 * 3_600_000
// Whether `id` can be an endpoint's id: anything else is no endpoint.
export const isEndpointId = isUuid

// A new endpoint of the account; its secret is returned here and never shown again. Each change below is recorded in
// the audit log, in its transaction, when an actor is given (the dashboard and the CLI give theirs).
export async function addEndpoint(sql: Sql, input: EndpointInput, allowPrivate: boolean, actor?: Actor) {
  const e = await checkEndpoint(input, allowPrivate)
  const secret = newSecret()
  return sql.begin(async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      insert into webhook_endpoints (account_id, url, kind, event_types, description, secret)
      values (${e.accountId}, ${e.url}, ${e.kind}, ${e.events}, ${e.description}, ${secret}) returning id`
    const after = { url: e.url, kind: e.kind, events: e.events, description: e.description }
    await audit(tx, actor, { accountId: e.accountId, action: 'webhook.added', target: row.id, after })
    return { id: row.id, secret }
  })
}

// Runs `change` (a statement returning the endpoint's account_id, and its url or state before) in a transaction
// with its audit entry; false when there is no such endpoint.
type Changed = { account_id: string } & Record<string, string | null>
async function changed(
  sql: Sql,
  id: string,
  change: (tx: postgres.TransactionSql) => Promise<Changed[]>,
  entry: (row: Changed) => {
    action: AuditAction
    before?: Record<string, string | null>
    after?: Record<string, string | null>
  },
  actor?: Actor
): Promise<boolean> {
  if (!isEndpointId(id)) return false
  return sql.begin(async (tx) => {
    const [row] = await change(tx)
    if (row) await audit(tx, actor, { accountId: row.account_id, target: id, ...entry(row) })
    return row !== undefined
  })
}

// The endpoints (with their last attempt: its last failed one or its last success, sql/031) that `where` selects,
// `w` being webhook_endpoints.
const selectEndpoints = (sql: Sql, where: postgres.PendingQuery<postgres.Row[]>) => sql<Endpoint[]>`
  select w.id, w.account_id as "accountId", w.url, w.kind, w.event_types as events, w.description,
         w.disabled_reason as "disabledReason", w.created_at as "createdAt",
         last.status as "lastStatus", last.at as "lastAttemptAt", left(last.answer, 100) as "lastAnswer"
  from webhook_endpoints w
  left join lateral (
    (select a.status, a.at, a.answer from webhook_attempts a where a.endpoint_id = w.id
     order by a.at desc, a.id desc limit 1)
    union all
    select w.last_delivered_status, w.last_delivered_at, null where w.last_delivered_at is not null
    order by at desc limit 1
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

export const removeEndpoint = (sql: Sql, id: string, actor?: Actor) =>
  changed(
    sql,
    id,
    (tx) => tx<Changed[]>`delete from webhook_endpoints where id = ${id} returning account_id, url`,
    (row) => ({ action: 'webhook.removed', before: { url: row.url } }),
    actor
  )

// The endpoint's state before a change, locked against a concurrent one (the audit entry's `before`).
const lockedState = (tx: postgres.TransactionSql, id: string) =>
  tx`select id, disabled_reason from webhook_endpoints where id = ${id} for no key update`

// Disabling cancels the endpoint's pending deliveries; enabled again, it receives the events made from then on.
export const disableEndpoint = (sql: Sql, id: string, reason: string, actor?: Actor) =>
  changed(
    sql,
    id,
    (tx) => tx<Changed[]>`
      with old as (${lockedState(tx, id)}),
      endpoint as (
        update webhook_endpoints w set disabled_reason = ${reason} from old where w.id = old.id
        returning w.id, w.account_id, old.disabled_reason
      ), cancelled as (
        update webhook_deliveries set state = 'cancelled'
        where endpoint_id in (select id from endpoint) and state = 'pending'
      )
      select account_id, disabled_reason from endpoint`,
    (row) => ({
      action: 'webhook.disabled',
      before: { disabled_reason: row.disabled_reason },
      after: { disabled_reason: reason },
    }),
    actor
  )

// Deliveries still pending for a disabled endpoint were made by an event whose transaction read the endpoint as
// enabled and committed after the disabling cancelled the rest (no lock orders the two: a lock per lead on its
// endpoints would serialize the leads). Enabling cancels them first, so the endpoint gets only what is made from
// then on; prune() cancels them for endpoints left disabled.
export const enableEndpoint = (sql: Sql, id: string, actor?: Actor) =>
  changed(
    sql,
    id,
    (tx) => tx<Changed[]>`
      with old as (${lockedState(tx, id)}),
      stray as (
        update webhook_deliveries set state = 'cancelled'
        where endpoint_id in (select id from old where disabled_reason is not null) and state = 'pending'
      )
      update webhook_endpoints w set disabled_reason = null, failing_since = null from old where w.id = old.id
      returning w.account_id, old.disabled_reason`,
    (row) => ({
      action: 'webhook.enabled',
      before: { disabled_reason: row.disabled_reason },
      after: { disabled_reason: null },
    }),
    actor
  )

// A new secret, and when the old one stops signing: until then (24 hours) both sign (both signatures in
// webhook-signature).
export async function rotateSecret(sql: Sql, id: string, now: Date, actor?: Actor) {
  const secret = newSecret()
  const until = new Date(now.getTime() + ROTATION_OVERLAP_MS)
  const done = await changed(
    sql,
    id,
    (tx) => tx<Changed[]>`
      update webhook_endpoints set previous_secret = secret, secret = ${secret}, previous_secret_until = ${until}
      where id = ${id} returning account_id`,
    () => ({ action: 'webhook.secret_rotated', after: { old_secret_until: until.toISOString() } }),
    actor
  )
  return done ? { secret, until } : null
}
