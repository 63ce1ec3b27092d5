import { createHash } from 'node:crypto'
import type postgres from 'postgres'
import { ApiError } from '../http/errors.js'

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
  // The honeypot: a form field hidden from people. Filled in, the lead is kept as spam (see spam.ts).
  website?: string
}

export const isSpam = (lead: NewLead) => (lead.website ?? '') !== ''

// The account the lead belongs to and the prefix of the key that sent it.
export interface LeadOwner {
  accountId: string
  prefix: string
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

const insert = (sql: Queries, o: LeadOwner, b: NewLead, key: string | null, hash: Buffer | null) => sql<LeadRow[]>`
  insert into leads (account_id, key_prefix, name, email, service, message, phone, company, budget, locale, source,
                     utm_source, utm_medium, utm_campaign, idempotency_key, request_sha256, spam)
  values (${o.accountId}, ${o.prefix}, ${b.name}, ${b.email}, ${b.service}, ${b.message},
          ${b.phone ?? null}, ${b.company ?? null}, ${b.budget ?? null}, ${b.locale ?? null}, ${b.source ?? null},
          ${b.utm?.source ?? null}, ${b.utm?.medium ?? null}, ${b.utm?.campaign ?? null}, ${key}, ${hash},
          ${isSpam(b)})
  on conflict (account_id, idempotency_key) where idempotency_key is not null do nothing
  returning id, created_at`

export async function insertLead(sql: Queries, owner: LeadOwner, lead: NewLead, key?: string): Promise<StoredLead> {
  if (key === undefined) return stored((await insert(sql, owner, lead, null, null))[0])
  const hash = createHash('sha256').update(JSON.stringify(lead)).digest()
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
      throw new ApiError(
        'idempotency_key_reused',
        `This Idempotency-Key was used with another request body in the last ${IDEMPOTENCY_HOURS} hours`
      )
    }
    return stored(prior, true)
  }
  throw new Error('Idempotency-Key: no stable answer after 3 attempts')
}
