import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { parseConfig } from '../../src/ops/config.js'
import { type Database, openDatabase } from '../../src/storage/db.js'
import { migrate } from '../../src/storage/migrate.js'
import type { Teardown } from './teardown.js'

// The settings that name a database: DATABASE_URL, or STUDIO_DATA_DIR for an embedded one.
export type DbEnv = Record<string, string>

// Its own database per test file: a fresh PostgreSQL database when DATABASE_URL is set, else a fresh embedded one.
export async function testDatabase(t: Teardown): Promise<DbEnv> {
  const admin = process.env.DATABASE_URL
  if (!admin) {
    const dir = mkdtempSync(join(tmpdir(), 'studio-test-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    return { STUDIO_DATA_DIR: dir }
  }
  return emptyPostgres(t, admin, 'studio_test')
}

// A new empty database on the PostgreSQL server of `admin` (a URL), named `prefix`_…, dropped at the end.
export async function emptyPostgres(t: Teardown, admin: string, prefix: string): Promise<DbEnv> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const sql = postgres(admin, { max: 1, onnotice: () => {} })
  await sql.unsafe(`create database ${name}`)
  await sql.end()
  t.teardown(async () => {
    const sql = postgres(admin, { max: 1, onnotice: () => {} })
    await sql.unsafe(`drop database if exists ${name} with (force)`)
    await sql.end()
  })
  const url = new URL(admin)
  url.pathname = `/${name}`
  return { DATABASE_URL: url.toString() }
}

export async function openTestDatabase(t: Teardown, dbEnv: DbEnv): Promise<Database> {
  const db = await openDatabase(parseConfig(dbEnv))
  await migrate(db.sql)
  t.teardown(() => db.close())
  return db
}
