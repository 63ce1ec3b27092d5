import { createHash, randomUUID } from 'node:crypto'
import type postgres from 'postgres'
import type { Autoreply } from '../accounts/key-autoreply.js'
import { ApiError } from '../http/errors.js'
import { recordset } from '../storage/recordset.js'

// The pool or a transaction: a caller may write more rows (an event) in the transaction that stores the lead.
type Queries = postgres.ISql

export interface NewLead {
  name: string
  email: string
  service: string
  message: string
  phone?: string
  company?: string
  budget?: string
  locale?: string
  source?: string
  utm?: { source?: string; medium?: string; campaign?: string }
  // What the form sent beyond the named fields, by name.
  fields?: Record<string, string>
  // The honeypot: a form field hidden from people. Filled in, the lead is kept as spam (see spam.ts).
  website?: string
  // Set by the service, never by the caller (leads/captcha.ts): the key's CAPTCHA failed, so the lead is kept as spam
  // for that reason; or the provider could not be asked, so the lead is stored and delivered, flagged.
  spamReason?: 'captcha_failed'
  captchaUnverified?: boolean
}

export const isSpam = (lead: NewLead) => (lead.website ?? '') !== '' || lead.spamReason !== undefined
const spamReason = (lead: NewLead) => lead.spamReason ?? ((lead.website ?? '') !== '' ? 'honeypot' : undefined)

// The account the lead belongs to and the prefix of the key that sent it.
export interface LeadOwner {
  accountId: string
  prefix: string
  // The key's autoresponder (accounts/key-autoreply.ts); none when left out.
  autoreply?: Autoreply | null
}

export interface StoredLead {
  id: string
  createdAt: Date
  // True when an earlier request with the same Idempotency-Key stored it.
  replayed: boolean
}

// Idempotency-Key (per account, 24 hours): the first request with a key creates the lead and keeps the key and the
// SHA-256 of its validated body (schema order, so the JSON key order of the request does not matter). A retry with
// the same key and body answers that lead again, same id and createdAt, replayed; the same key with another body is
// refused. Concurrent requests with one key meet at the unique index: one inserts, the others read its row. A key
// older than 24 hours is released and the request creates a new lead.
export const IDEMPOTENCY_HOURS = 24

interface LeadRow {
  id: string
  created_at: Date
}

const stored = (row: LeadRow, replayed = false): StoredLead => ({ id: row.id, createdAt: row.created_at, replayed })

// One lead: insertLeads's statement, so that a lead's row is written by one statement whichever path it takes.
const insert = (sql: Queries, owner: LeadOwner, lead: NewLead, key?: string, hash?: Buffer) =>
  insertLeads(sql, [{ id: randomUUID(), owner, lead, key, hash }])

// What the key keeps of the request: the SHA-256 of its validated body (without the CAPTCHA's marks: a retry's token
// is checked again, and may fare otherwise).
const requestHash = ({ spamReason, captchaUnverified, ...lead }: NewLead) =>
  createHash('sha256').update(JSON.stringify(lead)).digest()

export async function insertLead(sql: Queries, owner: LeadOwner, lead: NewLead, key?: string): Promise<StoredLead> {
  if (key === undefined) return stored((await insert(sql, owner, lead))[0])
  const hash = requestHash(lead)
  for (let attempt = 0; attempt < 3; attempt++) {
    const [row] = await insert(sql, owner, lead, key, hash)
    if (row) return stored(row)
    const [prior] = await sql<(LeadRow & { request_sha256: Buffer; fresh: boolean })[]>`
      select id, created_at, request_sha256,
             created_at > now() - make_interval(hours => ${IDEMPOTENCY_HOURS}) as fresh
      from leads where account_id = ${owner.accountId} and idempotency_key = ${key}`
    if (!prior) continue // released meanwhile: insert again
    if (!prior.fresh) {
      await sql`update leads set idempotency_key = null where id = ${prior.id}`
      continue
    }
    if (!hash.equals(prior.request_sha256)) {
      throw new ApiError({
        code: 'idempotency_key_reused',
        message: `This Idempotency-Key was used with another request body in the last ${IDEMPOTENCY_HOURS} hours`,
      })
    }
    return stored(prior, true)
  }
  throw new Error('Idempotency-Key: no stable answer after 3 attempts')
}

// A lead to store with others: its id is made by the caller (insertLeads), so that it can find its row in the answer.
export interface LeadToInsert {
  id: string
  owner: LeadOwner
  lead: NewLead
  key?: string
  // The body's hash for the key, when the caller has it already (insertLead compares replays with it).
  hash?: Buffer
}

const rowOf = ({ id, owner, lead, key, hash }: LeadToInsert) => ({
  id,
  account_id: owner.accountId,
  key_prefix: owner.prefix,
  name: lead.name,
  email: lead.email,
  service: lead.service,
  message: lead.message,
  phone: lead.phone,
  company: lead.company,
  budget: lead.budget,
  locale: lead.locale,
  source: lead.source,
  utm_source: lead.utm?.source,
  utm_medium: lead.utm?.medium,
  utm_campaign: lead.utm?.campaign,
  fields: lead.fields,
  idempotency_key: key,
  request_sha256: key === undefined ? undefined : (hash ?? requestHash(lead)).toString('hex'),
  spam: isSpam(lead),
  spam_reason: spamReason(lead),
  captcha_unverified: lead.captchaUnverified === true,
})

// The columns a new lead fills, each with its type: the rows go as one parameter (storage/recordset.ts), the hash of
// request_sha256 as hex.
const newLeads = recordset<ReturnType<typeof rowOf>>({
  id: 'uuid',
  account_id: 'uuid',
  key_prefix: 'text',
  name: 'text',
  email: 'text',
  service: 'text',
  message: 'text',
  phone: 'text',
  company: 'text',
  budget: 'text',
  locale: 'text',
  source: 'text',
  utm_source: 'text',
  utm_medium: 'text',
  utm_campaign: 'text',
  fields: 'jsonb',
  idempotency_key: 'text',
  request_sha256: 'text',
  spam: 'boolean',
  spam_reason: 'text',
  captcha_unverified: 'boolean',
})
const VALUES = newLeads.names.replace('request_sha256', "decode(request_sha256, 'hex')")

// Many leads in one INSERT … SELECT, as a fragment for the caller's statement (create.ts writes each lead's event
// in the same statement). A lead whose Idempotency-Key is taken (by an earlier lead, or by one before it in `leads`) is
// skipped: its id is missing from the rows returned (id, account_id, created_at), and the caller answers it with
// insertLead, which knows replays.
export function insertLeads(sql: Queries, leads: LeadToInsert[]) {
  return sql<(LeadRow & { account_id: string })[]>`
    insert into leads (${sql.unsafe(newLeads.names)})
    select ${sql.unsafe(VALUES)} from ${newLeads.from(sql, leads.map(rowOf))}
    on conflict (account_id, idempotency_key) where idempotency_key is not null do nothing
    returning id, account_id, created_at`
}
