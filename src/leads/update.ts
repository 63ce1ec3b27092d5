import { assignedMailRecipient } from '../accounts/lead-mail.js'
import type { Actor } from '../audit/record.js'
import { recordAudit } from '../audit/record.js'
import { invalid } from '../http/errors.js'
import type { LeadStatus } from '../outbox/lead-fields.js'
import { recordEvent } from '../outbox/event.js'
import { queueMails } from '../outbox/mail.js'
import type { Sql } from '../storage/db.js'
import { getLead, type LeadRead } from './read.js'

// A lead's status and assignee changed: the row, its lead.updated event, its audit entry and the new assignee's mail
// in one transaction.

interface LeadChange {
  status?: LeadStatus
  // The email of a user of the lead's account; null: nobody.
  assignee?: string | null
}

export interface UpdateLeadOptions {
  accountId: string
  id: string
  change: LeadChange
  actor: Actor
  // Mail is on: a new assignee gets a mail (made from the event when sent), unless they turned it off or gave the
  // lead to themselves.
  mail?: boolean
}

// The lead as it is after the change, or null when the account has no lead `id`. A change that changes nothing
// writes nothing. An assignee who is not a user of the account is the caller's invalid request.
export async function updateLead(sql: Sql, { accountId, id, change, actor, mail = false }: UpdateLeadOptions) {
  const changed = await sql.begin(async (tx) => {
    const [lead] = await tx<{ status: LeadStatus; assignee_id: string | null; assignee: string | null }[]>`
      select l.status, l.assignee_id, u.email as assignee from leads l left join users u on u.id = l.assignee_id
      where l.id = ${id} and l.account_id = ${accountId} for update of l`
    if (!lead) return null
    let assigneeId = lead.assignee_id
    let assignee = lead.assignee
    if (change.assignee !== undefined) {
      const [user] = change.assignee
        ? await tx<{ id: string; email: string }[]>`
            select id, email from users where account_id = ${accountId} and lower(email) = lower(${change.assignee})`
        : [{ id: null, email: null }]
      if (!user) throw invalid([{ path: 'assignee', message: 'is not a user of this account' }])
      ;[assigneeId, assignee] = [user.id, user.email]
    }
    const status = change.status ?? lead.status
    const changes = {
      ...(status !== lead.status && { status: { before: lead.status, after: status } }),
      ...(assigneeId !== lead.assignee_id && { assignee: { before: lead.assignee, after: assignee } }),
    }
    if (!changes.status && !changes.assignee) return true
    await tx`update leads set status = ${status}, assignee_id = ${assigneeId}, updated_at = clock_timestamp()
             where id = ${id}`
    const who = actor.kind === 'user' ? actor.email : null
    const keyPrefix = actor.kind === 'key' ? actor.prefix : null
    const at = new Date()
    const event = await recordEvent(tx, accountId, { type: 'lead.updated', data: { id, changes, who, keyPrefix } }, at)
    const self = who !== null && who.toLowerCase() === assignee?.toLowerCase()
    if (mail && changes.assignee && assigneeId && !self) {
      const recipient = assignedMailRecipient(tx, assigneeId)
      await queueMails(tx, recipient, { accountId, kind: 'assigned', eventId: event.id, at, notify: true })
    }
    await recordAudit(tx, actor, {
      accountId,
      action: 'lead.updated',
      target: id,
      before: { ...(changes.status && { status: lead.status }), ...(changes.assignee && { assignee: lead.assignee }) },
      after: { ...(changes.status && { status }), ...(changes.assignee && { assignee }) },
    })
    return true
  })
  return changed ? ((await getLead(sql, accountId, id)) as LeadRead) : null
}
