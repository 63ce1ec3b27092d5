import postgres from 'postgres'
import type { Config } from './config.js'
import { socketAnswers, socketPath, startEmbedded, type EmbeddedServer } from './embedded.js'

export type Sql = postgres.Sql

export interface Database {
  sql: Sql
  mode: 'external' | 'embedded' | 'embedded-client'
  ready(): Promise<boolean>
  close(): Promise<void>
}

// Fail fast while the database is down: a query waits for its connection's next attempt, and the driver's default
// backoff grows to 20 s between attempts, so a request would hang that long before its 503. Here the wait is at most
// 0.5 s (a refused connection costs nothing; an unreachable host is bounded by connect_timeout).
const base = {
  onnotice: () => {},
  backoff: (retries: number) => Math.min(retries, 5) / 10,
  connect_timeout: 2,
  idle_timeout: 0,
  max_lifetime: null,
  connection: { application_name: 'studio' },
} as const

export async function openDatabase(config: Pick<Config, 'DATABASE_URL' | 'STUDIO_DATA_DIR' | 'STUDIO_DB_POOL'>): Promise<Database> {
  let embedded: EmbeddedServer | null = null
  let sql: Sql
  let mode: Database['mode'] = 'external'
  if (config.DATABASE_URL) {
    sql = postgres(config.DATABASE_URL, { ...base, max: config.STUDIO_DB_POOL })
  } else {
    const path = socketPath(config.STUDIO_DATA_DIR)
    if (!(await socketAnswers(path))) embedded = await startEmbedded(config.STUDIO_DATA_DIR)
    if (!embedded) {
      mode = 'embedded-client'
      for (let i = 0; i < 100 && !(await socketAnswers(path)); i++) await new Promise((r) => setTimeout(r, 100))
    } else mode = 'embedded'
    sql = postgres({ ...base, path, user: 'postgres', database: 'postgres', max: Math.min(config.STUDIO_DB_POOL, 4) })
  }
  return {
    sql,
    mode,
    async ready() {
      try {
        await sql`select 1`
        return true
      } catch {
        return false
      }
    },
    async close() {
      await sql.end({ timeout: 5 })
      await embedded?.close()
    },
  }
}
