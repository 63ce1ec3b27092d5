import { readFileSync } from 'node:fs'
import { Refused } from '../ops/refused.js'
import type { Sql } from './db.js'

// `studio restore FILE`: a backup in plain SQL (`studio backup`'s, or pg_dump's with --inserts) loaded into an empty
// database, embedded or PostgreSQL, in one transaction: all of it or, on any error, nothing.

// The file's text, or a refusal saying why it cannot be restored.
export function readBackup(file: string): string {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new Refused(`cannot read ${file}: ${(e as Error).message}`)
  }
  if (!/^-- PostgreSQL database dump$/m.test(text.slice(0, 500)))
    throw new Refused(`${file} is not a backup in plain SQL (made by studio backup or pg_dump)`)
  if (/^COPY .* FROM stdin;$/m.test(text))
    throw new Refused(`${file} holds COPY data, which only psql loads: psql -f ${file} (or take it with studio backup)`)
  return text
}

// The tables, views and sequences outside PostgreSQL's own schemas.
async function relations(sql: Sql): Promise<number> {
  const [{ n }] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
    where s.nspname not in ('pg_catalog', 'information_schema') and s.nspname not like 'pg\\_%'
      and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')`
  return n
}

// What psql would skip or warn about, dropped: its \restrict meta-commands, and the settings this server does not
// have (a newer pg_dump sets ones an older PostgreSQL lacks, such as transaction_timeout before 17).
async function loadable(sql: Sql, text: string): Promise<string> {
  const known = new Set((await sql<{ name: string }[]>`select name from pg_settings`).map((r) => r.name))
  return text
    .replace(/^\\(?:un)?restrict\b.*$/gm, '')
    .replace(/^SET ([a-z_]+) = .*;$/gm, (line, name: string) => (known.has(name) ? line : ''))
}

export async function restore(sql: Sql, text: string): Promise<void> {
  const found = await relations(sql)
  if (found)
    throw new Refused(
      `the database is not empty (${found} tables, views or sequences): restore loads only into an empty one`
    )
  const script = await loadable(sql, text)
  await sql.begin((tx) => tx.unsafe(script))
}
