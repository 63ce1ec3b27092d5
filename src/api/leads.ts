import * as v from 'valibot'
import { BASE, route, type Reply, type Route } from '../http/route.js'
import { headerOf } from '../http/io.js'
import type { Leads } from '../leads/create.js'
import { IDEMPOTENCY_HOURS, type StoredLead } from '../leads/insert.js'
import { LeadCreated, LeadInput } from './schemas.js'

// POST /api/v1/leads: a lead from a website's form, stored once per Idempotency-Key (leads/create.ts writes it with
// its event).
export function leadsRoute(leads: Leads): Route {
  return route({
    method: 'POST',
    path: `${BASE}/leads`,
    uses: ['key', 'database', 'idempotency'],
    scope: 'leads:write',
    cors: true,
    body: LeadInput,
    headers: { 'Idempotency-Key': IdempotencyKey },
    summary: 'Create a lead',
    operationId: 'createLead',
    responses: {
      201: {
        description: 'The lead is stored (or, for a retried Idempotency-Key, was stored by the first request)',
        schema: LeadCreated,
        headers: {
          'Idempotent-Replayed': {
            description:
              'Present, `true`, when this answer repeats the one given to an earlier request with the same ' +
              'Idempotency-Key.',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      },
    },
    async handle({ req, principal, body }) {
      const key = headerOf(req, 'Idempotency-Key', IdempotencyKey)
      return created(await leads.create(principal, body, key))
    },
  })
}

export const IdempotencyKey = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
  v.regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
  v.description(
    `Makes a retry safe: a request with the key and body of one made in the last ${IDEMPOTENCY_HOURS} hours ` +
      '(by any key of the same account) answers the lead that one created instead of creating another; ' +
      'the same key with another body is ' +
      'refused (422 idempotency_key_reused). 1 to 255 printable ASCII characters, e.g. a UUID.'
  )
)

export const created = (lead: StoredLead): Reply => ({
  status: 201,
  body: { id: lead.id, createdAt: lead.createdAt.toISOString() },
  headers: lead.replayed ? { 'idempotent-replayed': 'true' } : undefined,
})
