import type { StoreLead } from '../api/leads.js'
import { insertLead } from '../leads/insert.js'
import type { Sql } from '../storage/db.js'
import { queueLeadMails } from './mail-outbox.js'
import { recordEvent } from './outbox.js'

// Stores a lead and, in the same transaction, its lead.created event (none for an Idempotency-Key replay: the first
// request made it) and, with mail on, one mail per user of the account who wants one. A 201 means the event and the
// mails will be delivered; a lead that was not stored has neither.
export const storeLeadWithEvent =
  (sql: Sql, mail = false): StoreLead =>
  (owner, lead, idempotencyKey) =>
    sql.begin(async (tx) => {
      const stored = await insertLead(tx, owner, lead, idempotencyKey)
      if (stored.replayed) return stored
      const data = { ...lead, id: stored.id, createdAt: stored.createdAt.toISOString(), keyPrefix: owner.prefix }
      const event = await recordEvent(tx, owner.accountId, { type: 'lead.created', data }, stored.createdAt)
      if (mail) await queueLeadMails(tx, owner.accountId, event.id, stored.createdAt)
      return stored
    })
