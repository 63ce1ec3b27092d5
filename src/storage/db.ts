import postgres from 'postgres'
import type { Config } from '../ops/config.js'
import { socketAnswers, socketPath, startEmbedded, type EmbeddedServer } from './embedded.js'

export type Sql = postgres.Sql

export interface Database {
  sql: Sql
  // The same pool without the per-query deadline, for work whose late answer must not be dropped.
  raw: Sql
  mode: 'external' | 'embedded' | 'embedded-client'
  // The embedded database's backup in plain SQL, in the process that owns it (mode `embedded`) only.
  backup?: () => Promise<string>
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

// A query the database has not answered within `ms` fails with code QUERY_DEADLINE (a 503), so a database that stops
// answering without closing its connections (frozen, or a network that drops packets) cannot hang requests. The query
// itself goes on; its late answer is dropped. Awaited tagged queries and sql.unsafe only (a cursor streams unbounded):
// a transaction (sql.begin) would hang on its ROLLBACK anyway, so a caller that waits on one bounds it with withTimeout.
export const deadlineError = (ms: number) =>
  Object.assign(new Error(`the database did not answer within ${ms} ms`), { code: 'QUERY_DEADLINE' })

// A promise (a transaction, which the per-query deadline does not cover) that fails with the deadline error after
// `ms`; if it settles later, `onLate` gets its value.
export function withTimeout<T>(query: Promise<T>, ms: number, onLate: (late: T) => unknown = () => {}): Promise<T> {
  if (!ms) return query
  return new Promise((resolve, reject) => {
    let late = false
    const timer = setTimeout(() => {
      late = true
      reject(deadlineError(ms))
      query.then(onLate).catch(() => {})
    }, ms)
    query.then(
      (v) => {
        if (late) return
        clearTimeout(timer)
        resolve(v)
      },
      (e) => {
        if (late) return
        clearTimeout(timer)
        reject(e)
      }
    )
  })
}

// The pool with the deadline, through what postgres.js makes public: a query is a promise that runs once awaited (its
// `then`), and the pool's other functions are properties of `sql`. Its queries are the driver's own, so they still
// nest as fragments; awaiting one waits at most `ms`.
function withDeadline(sql: Sql, ms: number): Sql {
  const bounded = <Q>(query: Q): Q => {
    if (!(query instanceof Promise)) return query
    const run = query.then.bind(query)
    const then: Promise<unknown>['then'] = (ok, ko) => withTimeout(run(), ms).then(ok, ko)
    return Object.assign(query, { then })
  }
  const tagged = (...args: unknown[]) => bounded((sql as unknown as (...a: unknown[]) => unknown)(...args))
  const unsafe: Sql['unsafe'] = (...args) => bounded(sql.unsafe(...args))
  return Object.assign(tagged, sql, { unsafe }) as unknown as Sql
}

export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'STUDIO_DATA_DIR' | 'STUDIO_DB_POOL'> &
    Partial<Pick<Config, 'STUDIO_DB_TIMEOUT_MS'>>
): Promise<Database> {
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
  const pool = sql
  if (config.STUDIO_DB_TIMEOUT_MS) sql = withDeadline(sql, config.STUDIO_DB_TIMEOUT_MS)
  return {
    sql,
    raw: pool,
    mode,
    backup: embedded?.backup,
    async ready() {
      try {
        await sql`select 1`
        return true
      } catch {
        return false
      }
    },
    async close() {
      await pool.end({ timeout: 5 })
      await embedded?.close()
    },
  }
}
