import type { StoreLead } from '../api/leads.js'
import { insertLead, isSpam } from '../leads/insert.js'
import type { Sql } from '../storage/db.js'
import { queueLeadMails } from './mail-outbox.js'
import { recordEvent } from './outbox.js'

export interface LeadOutbox {
  // Mail is on: each lead queues a mail per user of the account who wants one.
  mail?: boolean
  // This process's delivery worker: woken after the commit instead of by NOTIFY in it (see outbox.ts).
  wake?: () => void
}

// Stores a lead and, in the same transaction, its lead.created event (none for an Idempotency-Key replay: the first
// request made it) and, with mail on, one mail per user of the account who wants one. A 201 means the event and the
// mails will be delivered; a lead that was not stored has neither, nor has one kept as spam (its honeypot filled).
export const storeLeadWithEvent =
  (sql: Sql, { mail = false, wake }: LeadOutbox = {}): StoreLead =>
  async (owner, lead, idempotencyKey) => {
    const notify = !wake
    const { stored, deliveries } = await sql.begin(async (tx) => {
      const stored = await insertLead(tx, owner, lead, idempotencyKey)
      if (stored.replayed || isSpam(lead)) return { stored, deliveries: 0 }
      const { website: _, ...fields } = lead
      const data = { ...fields, id: stored.id, createdAt: stored.createdAt.toISOString(), keyPrefix: owner.prefix }
      const event = { type: 'lead.created' as const, data }
      const recorded = await recordEvent(tx, owner.accountId, event, stored.createdAt, { notify })
      const mails = mail ? await queueLeadMails(tx, owner.accountId, recorded.id, stored.createdAt) : 0
      return { stored, deliveries: recorded.deliveries + mails }
    })
    if (deliveries) wake?.()
    return stored
  }
