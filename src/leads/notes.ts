import { invalid } from '../http/errors.js'
import type { Sql } from '../storage/db.js'

// Notes on a lead: append-only (sql/038's trigger refuses a change), each with its author (a user's email, or the
// prefix of the key that wrote it) and time.

export const NOTE_MAX = 10_000

export interface Note {
  text: string
  author: string
  authorKind: 'user' | 'key'
  createdAt: string
}

export type Author = { kind: 'user'; email: string } | { kind: 'key'; prefix: string }

// The note added to the account's lead `id`, or null when the account has no such lead.
export async function addNote(sql: Sql, accountId: string, id: string, text: string, author: Author) {
  if (text.trim() === '') throw invalid([{ path: 'text', message: 'must not be blank' }])
  const name = author.kind === 'user' ? author.email : author.prefix
  const [row] = await sql<NoteRow[]>`
    insert into lead_notes (lead_id, author_kind, author, text)
    select id, ${author.kind}, ${name}, ${text} from leads where id = ${id} and account_id = ${accountId}
    returning lead_id, author_kind, author, text, created_at`
  return row ? noteOf(row) : null
}

interface NoteRow {
  lead_id: string
  author_kind: 'user' | 'key'
  author: string
  text: string
  created_at: Date
}

// The notes of the leads `ids`, oldest first, by lead.
export async function notesOf(sql: Sql, ids: string[]): Promise<Map<string, Note[]>> {
  const byLead = new Map<string, Note[]>(ids.map((id) => [id, []]))
  if (!ids.length) return byLead
  const rows = await sql<NoteRow[]>`
    select lead_id, author_kind, author, text, created_at from lead_notes
    where lead_id = any(${sql.array(ids)}::uuid[]) order by created_at, id`
  for (const row of rows) byLead.get(row.lead_id)?.push(noteOf(row))
  return byLead
}

const noteOf = (r: NoteRow): Note => ({
  text: r.text,
  author: r.author,
  authorKind: r.author_kind,
  createdAt: r.created_at.toISOString(),
})
