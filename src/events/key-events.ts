import type { KeyChange, OnKeyChange } from '../accounts/accounts.js'
import { recordEvent } from './outbox.js'

// key.created, key.rotated and key.revoked, recorded in the transaction of the change (accounts/ calls back);
// `who` is the email of the user who made it, null from the command line. Never a secret.
export const recordKeyChanges =
  (who: string | null, clock: () => number = Date.now): OnKeyChange =>
  (tx, c: KeyChange) => {
    const at = new Date(clock())
    const base = { prefix: c.prefix, name: c.name, who }
    const event =
      c.type === 'key.rotated'
        ? { type: c.type, data: { ...base, newPrefix: c.newPrefix } }
        : { type: c.type, data: base }
    return recordEvent(tx, c.accountId, event, at)
  }
