import * as v from 'valibot'
import { ApiError } from '../http/errors.js'
import { BASE, route, type Route } from '../http/route.js'
import { updateLead } from '../leads/update.js'
import { LEAD_STATUSES } from '../outbox/lead-fields.js'
import type { Sql } from '../storage/db.js'
import { Lead } from './lead-reads.js'
import { Email } from './schemas.js'

// PATCH /api/v1/leads/{id}: a lead's status and assignee changed with a leads:manage key (leads/update.ts).

const LeadUpdate = v.pipe(
  v.strictObject({
    status: v.optional(
      v.pipe(
        v.picklist(LEAD_STATUSES, `must be one of ${LEAD_STATUSES.join(', ')}`),
        v.description('Any status may follow any.')
      )
    ),
    assignee: v.optional(
      v.pipe(v.nullable(Email), v.description('The email of a user of the account to give the lead to; null: nobody.'))
    ),
  }),
  v.check((b) => b.status !== undefined || b.assignee !== undefined, 'must name status or assignee'),
  v.title('LeadUpdate')
)

export function updateLeadRoute(sql: Sql): Route {
  return route({
    method: 'PATCH',
    path: `${BASE}/leads/:id`,
    params: { id: v.pipe(v.string(), v.uuid(), v.description("The lead's id.")) },
    uses: ['key', 'database'],
    scope: 'leads:manage',
    body: LeadUpdate,
    summary: "Change a lead's status or assignee",
    operationId: 'updateLead',
    responses: { 200: { description: 'The lead as changed', schema: Lead } },
    async handle({ principal, params, body }) {
      const actor = { kind: 'key', prefix: principal.prefix } as const
      const lead = await updateLead(sql, { accountId: principal.accountId, id: params.id, change: body, actor })
      if (!lead) throw new ApiError({ code: 'not_found', message: `There is no lead "${params.id}"` })
      return { status: 200, body: lead }
    },
  })
}
