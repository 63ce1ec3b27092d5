import * as v from 'valibot'
import { BASE, route, type Route } from '../http/route.js'
import { eraseLeads } from '../leads/erase.js'
import { addNote, NOTE_MAX } from '../leads/notes.js'
import { updateLead } from '../leads/update.js'
import { LEAD_STATUSES, text } from '../outbox/lead-fields.js'
import type { Sql } from '../storage/db.js'
import { LEAD_ID, Lead, LeadNote, noLead } from './lead-reads.js'
import { Email } from './schemas.js'

// A lead changed with a leads:manage key: PATCH /api/v1/leads/{id}, its status and assignee (leads/update.ts).

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

// `mail`: mail is on (a new assignee gets one).
export function updateLeadRoute(sql: Sql, mail: boolean): Route {
  return route({
    method: 'PATCH',
    path: `${BASE}/leads/:id`,
    params: LEAD_ID,
    uses: ['key', 'database'],
    scope: 'leads:manage',
    body: LeadUpdate,
    summary: "Change a lead's status or assignee",
    operationId: 'updateLead',
    responses: { 200: { description: 'The lead as changed', schema: Lead } },
    async handle({ principal, params, body }) {
      const actor = { kind: 'key', prefix: principal.prefix } as const
      const change = { accountId: principal.accountId, id: params.id, change: body, actor, mail }
      const lead = await updateLead(sql, change)
      if (!lead) throw noLead(params.id)
      return { status: 200, body: lead }
    },
  })
}

const NoteInput = v.pipe(
  v.strictObject({ text: v.pipe(text(NOTE_MAX, 1), v.description(`The note, 1 to ${NOTE_MAX} characters.`)) }),
  v.title('NoteInput')
)

// POST /api/v1/leads/{id}/notes: a note appended to a lead (leads/notes.ts).
export function addNoteRoute(sql: Sql): Route {
  return route({
    method: 'POST',
    path: `${BASE}/leads/:id/notes`,
    params: LEAD_ID,
    uses: ['key', 'database'],
    scope: 'leads:manage',
    body: NoteInput,
    summary: 'Add a note to a lead',
    operationId: 'addLeadNote',
    responses: { 201: { description: 'The note as stored', schema: LeadNote } },
    async handle({ principal, params, body }) {
      const author = { kind: 'key', prefix: principal.prefix } as const
      const note = await addNote(sql, principal.accountId, params.id, body.text, author)
      if (!note) throw noLead(params.id)
      return { status: 201, body: note }
    },
  })
}

// DELETE /api/v1/leads/{id}: the lead erased, with its data everywhere the service keeps it (leads/erase.ts).
export function eraseLeadRoute(sql: Sql): Route {
  return route({
    method: 'DELETE',
    path: `${BASE}/leads/:id`,
    params: LEAD_ID,
    uses: ['key', 'database'],
    scope: 'leads:manage',
    summary: 'Erase a lead',
    operationId: 'eraseLead',
    responses: {
      204: {
        description:
          'The lead is erased: its row and notes are gone, its events are tombstones and what was not sent of ' +
          'them is cancelled; a lead.erased event says so',
      },
    },
    async handle({ principal, params }) {
      const actor = { kind: 'key', prefix: principal.prefix } as const
      const erased = await eraseLeads(sql, { accountId: principal.accountId, ids: [params.id], actor })
      if (!erased.length) throw noLead(params.id)
      return { status: 204 }
    },
  })
}
