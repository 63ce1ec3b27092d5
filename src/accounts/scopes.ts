import { type Actor, audit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'

// What a key may do. Each API operation that takes a key needs one of these (its route declares which); reading
// /openapi.json needs none. A key is made with all of them unless it is given fewer, and its set can only shrink: a
// key keeps the list it was made with, so a scope added here is held only by keys made after it.
export const SCOPES = ['me:read', 'leads:write', 'leads:read', 'leads:manage', 'completions:write'] as const
export type Scope = (typeof SCOPES)[number]

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s)

// The scopes of a comma-separated list (`leads:write,me:read`), in the order of SCOPES, or the names that are not
// scopes; an empty list is not a set of scopes either (a key that can do nothing is a revoked key).
export function parseScopes(names: readonly string[]): { scopes: Scope[] } | { unknown: string[] } {
  const trimmed = names.map((n) => n.trim()).filter((n) => n !== '')
  const unknown = trimmed.filter((n) => !isScope(n))
  if (unknown.length || !trimmed.length) return { unknown }
  return { scopes: SCOPES.filter((s) => trimmed.includes(s)) }
}

export const scopeList = (text: string) => text.split(',')

export type Narrowed =
  | { ok: true; accountId: string; before: Scope[]; after: Scope[] }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'wider'; added: Scope[] }

export interface NarrowScopesOptions {
  prefix: string
  scopes: Scope[]
  // Limits the change to that account's keys (the dashboard's).
  accountId?: string
  actor?: Actor
}

// Narrows the scopes of the key `prefix` to `scopes`, which must be among those it has: a wider set is refused and
// nothing changes. updated_at moves so that every server drops its cached copy of the key within a poll. A change is
// recorded in the audit log with `actor`.
export function narrowScopes(sql: Sql, { prefix, scopes, accountId, actor }: NarrowScopesOptions): Promise<Narrowed> {
  return sql.begin(async (tx): Promise<Narrowed> => {
    const [row] = await tx<{ account_id: string; scopes: string[] }[]>`
      select account_id, scopes from api_keys
      where prefix = ${prefix} ${accountId ? tx`and account_id = ${accountId}` : tx``} for update`
    if (!row) return { ok: false, reason: 'not_found' }
    const before = SCOPES.filter((s) => row.scopes.includes(s))
    const added = scopes.filter((s) => !before.includes(s))
    if (added.length) return { ok: false, reason: 'wider', added }
    await tx`update api_keys set scopes = ${tx.array(scopes)}, updated_at = clock_timestamp() where prefix = ${prefix}`
    if (scopes.length !== before.length) {
      const entry = { before: { scopes: before }, after: { scopes } }
      await audit(tx, actor, { accountId: row.account_id, action: 'key.scopes_narrowed', target: prefix, ...entry })
    }
    return { ok: true, accountId: row.account_id, before, after: scopes }
  })
}
