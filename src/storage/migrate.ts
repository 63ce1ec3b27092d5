import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { version } from '../ops/version.js'
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

// A schema version: the number of the newest of these migrations (`022` for 022_completions_usage_missing.sql).
const schemaVersion = (names: string[]) =>
  names.map((n) => n.slice(0, 3)).reduce((newest, n) => (n > newest ? n : newest), '000')

// The database was migrated by a newer release: it has migrations this bundle does not know, so its schema may have
// moved past what this code was written for. Refused (exit code 2) rather than served; nothing is changed.
export class NewerDatabaseError extends Error {
  constructor(unknown: string[], applied: string[], known: string[]) {
    super(
      `the database is at schema version ${schemaVersion(applied)}, this bundle (studio ${version}) at ` +
        `${schemaVersion(known)}: the database has migrations it does not know (${unknown.join(', ')}); ` +
        'run the release that migrated it or a newer one'
    )
  }
}

async function appliedNames(sql: Sql): Promise<string[]> {
  try {
    return (await sql<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name)
  } catch (e) {
    if ((e as { code?: string }).code === '42P01') return [] // no schema_migrations yet
    throw e
  }
}

function refuseNewer(applied: string[], migrations: Migration[]) {
  const known = migrations.map((m) => m.name)
  const unknown = applied.filter((name) => !known.includes(name)).sort()
  if (unknown.length) throw new NewerDatabaseError(unknown, applied, known)
}

// The migrations that would run, in order, without changing anything; NewerDatabaseError over a newer database.
export async function pendingMigrations(sql: Sql, migrations = loadMigrations()): Promise<string[]> {
  const applied = await appliedNames(sql)
  refuseNewer(applied, migrations)
  return migrations.map((m) => m.name).filter((name) => !applied.includes(name))
}

// All pending migrations run in one transaction holding an advisory lock, so two processes starting together
// apply each one exactly once, and a failed migration leaves nothing half-applied.
// First one read without a transaction: when every migration is applied (every start but the first of a version),
// that is all, one round trip instead of five before the server listens.
// A database with migrations this bundle does not know is refused (NewerDatabaseError), before and under the lock.
export async function migrate(sql: Sql, migrations = loadMigrations()): Promise<string[]> {
  if (!(await pendingMigrations(sql, migrations)).length) return []
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(7417263001)`
    await tx`
      create table if not exists schema_migrations (
        name text primary key, applied_at timestamptz not null default now()
      )`
    const done = (await tx<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name)
    refuseNewer(done, migrations)
    const applied: string[] = []
    for (const m of migrations) {
      if (done.includes(m.name)) continue
      await tx.unsafe(m.sql)
      await tx`insert into schema_migrations (name) values (${m.name})`
      applied.push(m.name)
    }
    return applied
  })
}
