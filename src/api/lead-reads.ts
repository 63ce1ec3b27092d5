import * as v from 'valibot'
import { ApiError } from '../http/errors.js'
import { BASE, route, type Route } from '../http/route.js'
import { getLead, isCursor, type LeadQuery, listLeads } from '../leads/read.js'
import { LEAD_STATUSES } from '../outbox/lead-fields.js'
import type { Sql } from '../storage/db.js'
import { Email } from './schemas.js'

// GET /api/v1/leads and GET /api/v1/leads/{id}: an account's leads read by another system (leads/read.ts).

// The path parameter of /leads/{id} and the paths under it.
export const LEAD_ID = { id: v.pipe(v.string(), v.uuid(), v.description("The lead's id.")) }

// The 404 of every /leads/{id} route: no lead of the key's account has that id.
export const noLead = (id: string) => new ApiError({ code: 'not_found', message: `There is no lead "${id}"` })

export const LeadNote = v.pipe(
  v.object({
    text: v.string(),
    author: v.pipe(v.string(), v.description("The user's email, or the prefix of the key that wrote it.")),
    authorKind: v.picklist(['user', 'key']),
    createdAt: v.pipe(v.string(), v.isoTimestamp()),
  }),
  v.title('LeadNote')
)

const nullable = (description: string) => v.pipe(v.nullable(v.string()), v.description(description))
const Timestamp = v.pipe(v.string(), v.isoTimestamp())

export const Lead = v.pipe(
  v.object({
    id: v.pipe(v.string(), v.uuid()),
    createdAt: Timestamp,
    updatedAt: v.pipe(Timestamp, v.description('When its status or assignee last changed, else createdAt.')),
    name: v.string(),
    email: v.string(),
    service: v.string(),
    message: v.string(),
    phone: nullable('As sent, or null.'),
    company: nullable('As sent, or null.'),
    budget: nullable('As sent, or null.'),
    locale: nullable('As sent, or null.'),
    source: nullable('As sent, or null.'),
    utm: v.pipe(
      v.nullable(
        v.object({ source: v.nullable(v.string()), medium: v.nullable(v.string()), campaign: v.nullable(v.string()) })
      ),
      v.description('The UTM parameters sent, or null when none was.')
    ),
    status: v.pipe(v.picklist(LEAD_STATUSES), v.description('Every lead starts as new.')),
    assignee: nullable('The email of the user of the account the lead is given to, or null.'),
    keyPrefix: v.pipe(v.string(), v.description('The prefix of the key that sent it.')),
    spam: v.pipe(v.boolean(), v.description('Kept as spam: its honeypot field was filled, or its CAPTCHA failed.')),
    fields: v.pipe(
      v.optional(v.record(v.string(), v.string())),
      v.description("The extra fields it was sent with (`fields`, a form's other inputs); absent when none were.")
    ),
    notes: v.pipe(v.array(LeadNote), v.description('Its notes, oldest first.')),
  }),
  v.title('Lead')
)

const LeadPage = v.pipe(
  v.object({
    leads: v.pipe(v.array(Lead), v.description('Newest first.')),
    next_cursor: v.pipe(
      v.nullable(v.string()),
      v.description('The `cursor` of the next (older) page, or null on the last page.')
    ),
  }),
  v.title('LeadPage')
)

const Limit = v.pipe(
  v.string(),
  v.regex(/^\d{1,3}$/, 'must be an integer from 1 to 100'),
  v.transform(Number),
  v.check((n) => n >= 1 && n <= 100, 'must be an integer from 1 to 100'),
  v.description('How many leads a page holds, 1 to 100 (default 50).')
)
const Cursor = v.pipe(
  v.string(),
  v.check(isCursor, 'must be a next_cursor this operation answered'),
  v.description("The previous page's `next_cursor`: the page of the leads older than its last one.")
)
const DateTime = (description: string) =>
  v.pipe(v.string(), v.isoTimestamp('must be a date-time'), v.description(description))
const Spam = v.pipe(
  v.picklist(['true', 'false'], 'must be true or false'),
  v.transform((s) => s === 'true'),
  v.description('true: the leads kept as spam instead of the others (default false).')
)

export function listLeadsRoute(sql: Sql): Route {
  return route({
    method: 'GET',
    path: `${BASE}/leads`,
    uses: ['key', 'database'],
    scope: 'leads:read',
    query: {
      limit: Limit,
      cursor: Cursor,
      since: DateTime('Only leads created at or after this time.'),
      until: DateTime('Only leads created before this time.'),
      status: v.pipe(
        v.picklist(LEAD_STATUSES, `must be one of ${LEAD_STATUSES.join(', ')}`),
        v.description('Only leads with this status.')
      ),
      assignee: v.pipe(Email, v.description('Only leads given to the user with this email.')),
      spam: Spam,
    },
    summary: "The account's leads, newest first, a page at a time",
    operationId: 'listLeads',
    responses: { 200: { description: 'A page of leads', schema: LeadPage } },
    async handle({ principal, query }) {
      const { leads, nextCursor } = await listLeads(sql, principal.accountId, {
        limit: 50,
        spam: false,
        ...(query as Partial<LeadQuery>),
      })
      return { status: 200, body: { leads, next_cursor: nextCursor } }
    },
  })
}

export function getLeadRoute(sql: Sql): Route {
  return route({
    method: 'GET',
    path: `${BASE}/leads/:id`,
    params: LEAD_ID,
    uses: ['key', 'database'],
    scope: 'leads:read',
    summary: 'One lead',
    operationId: 'getLead',
    responses: { 200: { description: 'The lead', schema: Lead } },
    async handle({ principal, params }) {
      const lead = await getLead(sql, principal.accountId, params.id)
      if (!lead) throw noLead(params.id)
      return { status: 200, body: lead }
    },
  })
}
