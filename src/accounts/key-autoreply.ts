import { isEmailAddress } from '../outbox/lead-fields.js'
import type { Sql } from '../storage/db.js'
import { changeKeyColumns, type KeyColumnsOf } from './key-columns.js'
import type { Scope } from './scopes.js'

// A lead key's autoresponder: the mail sent to the person who wrote (leads/autoreply.ts queues it), its subject and
// plain-text body with {{field}} placeholders, and the Reply-To the account chooses (null: none, a reply goes to the
// service's From).

export interface Autoreply {
  subject: string
  body: string
  replyTo: string | null
}

// Why each part is refused, or null.
export function subjectRefusal(s: string) {
  if (s.trim() === '') return 'the subject is empty'
  if (s.length > 200) return 'the subject is longer than 200 characters'
  if (/[\p{Cc}\p{Zl}\p{Zp}]/u.test(s)) return 'the subject is one line, without control characters'
  return null
}

export function bodyRefusal(s: string) {
  if (s.trim() === '') return 'the body is empty'
  if (s.length > 10_000) return 'the body is longer than 10,000 characters'
  if (s.includes('\u0000') || !s.isWellFormed()) return 'the body is not text'
  return null
}

export const replyToRefusal = (s: string) =>
  s.length <= 254 && isEmailAddress(s) ? null : 'the Reply-To is not an email address'

export type AutoreplySet =
  | { ok: true; accountId: string; autoreply: Autoreply | null }
  | { ok: false; reason: 'not_found' | 'not_a_lead_key' }

export interface SetKeyAutoreplyOptions extends KeyColumnsOf {
  // null: none.
  autoreply: Autoreply | null
}

type AutoreplyRow = {
  scopes: Scope[]
  autoreply_subject: string | null
  autoreply_body: string | null
  autoreply_reply_to: string | null
}

// Sets or clears the key's autoresponder, with one audit entry (none when nothing changes) naming the subject and the
// Reply-To and saying whether the body changed. Only a key that may create leads has one.
export function setKeyAutoreply(sql: Sql, { autoreply, ...key }: SetKeyAutoreplyOptions) {
  const columns = ['scopes', 'autoreply_subject', 'autoreply_body', 'autoreply_reply_to'] as const
  const action = 'key.autoreply_changed'
  return changeKeyColumns<AutoreplyRow, AutoreplySet>(sql, { ...key, columns, action }, (row) => {
    if (autoreply && !row.scopes.includes('leads:write')) return { result: { ok: false, reason: 'not_a_lead_key' } }
    const result = { ok: true as const, accountId: row.account_id, autoreply }
    const [subject, body, replyTo] = [autoreply?.subject ?? null, autoreply?.body ?? null, autoreply?.replyTo ?? null]
    const bodyChanged = body !== row.autoreply_body
    if (subject === row.autoreply_subject && replyTo === row.autoreply_reply_to && !bodyChanged) return { result }
    const set = { autoreply_subject: subject, autoreply_body: body, autoreply_reply_to: replyTo }
    const before = { subject: row.autoreply_subject, reply_to: row.autoreply_reply_to }
    const after = { subject, reply_to: replyTo, body_changed: bodyChanged }
    return { result, change: { set, before, after } }
  })
}

// The columns of api_keys that hold an autoresponder, as the key's Autoreply.
export const autoreplyOf = (r: {
  autoreply_subject: string | null
  autoreply_body: string | null
  autoreply_reply_to: string | null
}): Autoreply | null =>
  r.autoreply_subject && r.autoreply_body
    ? { subject: r.autoreply_subject, body: r.autoreply_body, replyTo: r.autoreply_reply_to }
    : null

// The key's autoresponder (the dashboard's form shows it); null: none.
export async function keyAutoreply(sql: Sql, prefix: string): Promise<Autoreply | null> {
  const [row] = await sql<
    { autoreply_subject: string | null; autoreply_body: string | null; autoreply_reply_to: string | null }[]
  >`select autoreply_subject, autoreply_body, autoreply_reply_to from api_keys where prefix = ${prefix}`
  return row ? autoreplyOf(row) : null
}
