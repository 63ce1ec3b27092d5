import * as v from 'valibot'
import { LEAD_FIELDS, LEAD_STATUSES } from './lead-fields.js'

// Every event the service sends, each type with its `data`, declared once: the outbox writes what these describe,
// the OpenAPI document's `webhooks` map is generated from them, and the tests hold deliveries against them.

const timestamp = v.pipe(v.string(), v.isoTimestamp())
const prefix = v.pipe(v.string(), v.description('The public prefix of the key (never its secret).'))
const who = v.pipe(
  v.nullable(v.string()),
  v.description('Email of the user who made the change; null when it was made from the command line.')
)

// Every field of the lead but the honeypot (a lead that filled it raises no event).
const LeadCreatedData = v.object({
  ...LEAD_FIELDS,
  id: v.pipe(v.string(), v.uuid(), v.description('Identifier of the lead.')),
  createdAt: timestamp,
  keyPrefix: v.pipe(v.string(), v.description('Prefix of the API key that created the lead.')),
  captchaUnverified: v.optional(
    v.pipe(
      v.literal(true),
      v.description(
        'Present, true, when the key requires a CAPTCHA and its provider could not be asked (no answer within 5 s, ' +
          'or a 5xx): the lead was stored and delivered without its token being checked.'
      )
    )
  ),
})

const change = <S extends v.GenericSchema>(value: S) => v.object({ before: value, after: value })
const LeadUpdatedData = v.object({
  id: v.pipe(v.string(), v.uuid(), v.description('Identifier of the lead.')),
  changes: v.pipe(
    v.object({
      status: v.optional(change(v.picklist(LEAD_STATUSES))),
      assignee: v.optional(
        v.pipe(change(v.nullable(v.string())), v.description('Emails of the users it was and is given to, or null.'))
      ),
    }),
    v.description('What changed, each with its value before and after; what did not change is left out.')
  ),
  who,
  keyPrefix: v.pipe(
    v.nullable(v.string()),
    v.description('Prefix of the API key that made the change; null when it was not made through the API.')
  ),
})

const keyData = <E extends v.ObjectEntries>(extra: E) =>
  v.object({ prefix, name: v.pipe(v.nullable(v.string()), v.description('The key’s name.')), who, ...extra })

const quotaData = v.object({
  month: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}$/), v.description('The calendar month (UTC), YYYY-MM.')),
  plan: v.string(),
  limit: v.pipe(v.number(), v.integer(), v.description('Completions the plan allows this month.')),
  used: v.pipe(v.number(), v.integer(), v.description('Completions used when the event was made.')),
})

const usdText = (what: string) => v.pipe(v.string(), v.description(`${what} in USD, a decimal string.`))
const budgetData = v.object({
  month: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}$/), v.description('The calendar month (UTC), YYYY-MM.')),
  budget: usdText('The monthly budget (the account’s, or the key’s when keyPrefix is present)'),
  spent: usdText('Spent this month when the event was made'),
  // Absent on the account's events, so theirs stay as they were.
  keyPrefix: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'Present when the budget is a key’s: the prefix of its line’s newest key (the budget counts the spend of the ' +
          'keys it was rotated from). Absent when it is the account’s.'
      )
    )
  ),
})

const EVENT_DATA = {
  'lead.created': LeadCreatedData,
  'lead.updated': LeadUpdatedData,
  'lead.erased': v.object({ id: v.pipe(v.string(), v.uuid(), v.description('Identifier of the erased lead.')) }),
  'key.created': keyData({}),
  'key.rotated': keyData({ newPrefix: v.pipe(v.string(), v.description('Prefix of the key that replaces it.')) }),
  'key.revoked': keyData({}),
  'quota.warning': quotaData,
  'quota.exhausted': quotaData,
  'budget.warning': budgetData,
  'budget.exhausted': budgetData,
  'webhook.test': v.object({
    endpointId: v.pipe(v.string(), v.uuid(), v.description('The endpoint it was sent to.')),
    who,
  }),
} as const

const summaries: Record<EventType, string> = {
  'lead.created': 'A lead was created through the API',
  'lead.updated': 'A lead’s status or assignee changed',
  'lead.erased':
    'A lead was erased: its data is gone from the service, and its earlier events are tombstones ({id, erased: true})',
  'key.created': 'An API key was created',
  'key.rotated': 'An API key was rotated (a new key replaces it; the old one expires after its grace period)',
  'key.revoked': 'An API key was revoked',
  'quota.warning': 'The account has used 80% of this month’s AI quota (at most once per month)',
  'quota.exhausted': 'The account has used all of this month’s AI quota (at most once per month)',
  'budget.warning':
    'The account, or a key (keyPrefix), has spent 80% of this month’s budget (at most once per budget and month)',
  'budget.exhausted':
    'The spend of the account, or of a key (keyPrefix), reached this month’s budget, or a call was first refused ' +
    'for want of it (at most once per budget and month)',
  'webhook.test':
    'A test event, sent by hand from the dashboard to one endpoint (whatever types it wants); nothing happened',
}

export type EventType = keyof typeof EVENT_DATA
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[]
// The types an endpoint can ask for: all but the test event, which is only ever sent by hand to one endpoint.
export const SUBSCRIBABLE_TYPES = EVENT_TYPES.filter((t) => t !== 'webhook.test')
// The `data` of one type: exactly what its schema outputs.
export type EventData<T extends EventType> = v.InferOutput<(typeof EVENT_DATA)[T]>
// One event as the outbox takes it: for a union of types, a union of `{type, data}` pairs, so that a type is never
// paired with another type's data (key.rotated without its newPrefix).
export type EventOf<T extends EventType = EventType> = { [K in T]: { type: K; data: EventData<K> } }[T]

const titleOf = (type: string) => `${type.replace(/(^|[._])([a-z])/g, (_, __, c: string) => c.toUpperCase())}Event`

// The Standard Webhooks envelope of one type: `{type, timestamp, data}`, the timestamp an RFC 3339 date-time.
const envelope = <T extends EventType>(type: T) =>
  v.pipe(
    v.object({
      type: v.literal(type),
      timestamp: v.pipe(timestamp, v.description('When the event happened (RFC 3339).')),
      data: EVENT_DATA[type] as (typeof EVENT_DATA)[T],
    }),
    v.title(titleOf(type)),
    v.description(summaries[type])
  )

// Each type's envelope, typed per type (its `data` that type's schema, not the union of all).
export const EVENT_ENVELOPES = Object.fromEntries(EVENT_TYPES.map((t) => [t, envelope(t)])) as {
  [T in EventType]: ReturnType<typeof envelope<T>>
}
