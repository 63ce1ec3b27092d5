import type { StoreLead } from '../api/leads.js'
import { insertLead } from '../leads/insert.js'
import type { Sql } from '../storage/db.js'
import { recordEvent } from './outbox.js'

// Stores a lead and, in the same transaction, its lead.created event (none for an Idempotency-Key replay: the first
// request made it). A 201 means the event will be delivered; a lead that was not stored has no event.
export const storeLeadWithEvent =
  (sql: Sql): StoreLead =>
  (owner, lead, idempotencyKey) =>
    sql.begin(async (tx) => {
      const stored = await insertLead(tx, owner, lead, idempotencyKey)
      if (stored.replayed) return stored
      const data = { ...lead, id: stored.id, createdAt: stored.createdAt.toISOString(), keyPrefix: owner.prefix }
      await recordEvent(tx, owner.accountId, { type: 'lead.created', data }, stored.createdAt)
      return stored
    })
