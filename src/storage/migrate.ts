import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Sql } from './db.js'

export interface Migration {
  name: string
  sql: string
}

declare const STUDIO_MIGRATIONS: Migration[] | undefined

function loadMigrations(): Migration[] {
  if (typeof STUDIO_MIGRATIONS !== 'undefined') return STUDIO_MIGRATIONS
  const dir = fileURLToPath(new URL('../../sql/', import.meta.url))
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(dir + name, 'utf8') }))
}

// All pending migrations run in one transaction holding an advisory lock, so two processes starting together
// apply each one exactly once, and a failed migration leaves nothing half-applied.
export async function migrate(sql: Sql, migrations = loadMigrations()): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(7417263001)`
    await tx`
      create table if not exists schema_migrations (
        name text primary key, applied_at timestamptz not null default now()
      )`
    const done = new Set((await tx<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name))
    const applied: string[] = []
    for (const m of migrations) {
      if (done.has(m.name)) continue
      await tx.unsafe(m.sql)
      await tx`insert into schema_migrations (name) values (${m.name})`
      applied.push(m.name)
    }
    return applied
  })
}
