import type postgres from 'postgres'
import type { Sql } from '../storage/db.js'
import { recordset } from '../storage/recordset.js'
import type { Logger } from '../ops/log.js'

interface CompletionRecord {
  account_id: string
  key_prefix: string
  model_alias: string
  upstream_model: string
  input_tokens: number
  output_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
  latency_ms: number
  attempts: number
  outcome: string
  upstream_request_id: string | null
  upstream: string | null
  tries: { upstream: string; model: string; outcome: string; latency_ms: number }[]
  created_at: Date
  usage_missing: boolean
  cost_micros: number | null
  // What the call held of its account's budget (budget.ts), released by the statement that adds its cost.
  budget_hold: number
  budget_month: string
  // What it held of its key line's budget, under the line's newest key (sql/047), released by the same statement.
  key_hold: number
  key_line: string
}

// Each column with its type, in the table's order: the rows go as one parameter (storage/recordset.ts).
const completions = recordset<CompletionRecord>({
  account_id: 'uuid',
  key_prefix: 'text',
  model_alias: 'text',
  upstream_model: 'text',
  input_tokens: 'int',
  output_tokens: 'int',
  cache_read_input_tokens: 'int',
  cache_creation_input_tokens: 'int',
  latency_ms: 'int',
  attempts: 'int',
  outcome: 'text',
  upstream_request_id: 'text',
  upstream: 'text',
  tries: 'jsonb',
  created_at: 'timestamptz',
  usage_missing: 'boolean',
  cost_micros: 'bigint',
  budget_hold: 'bigint',
  budget_month: 'date',
  key_hold: 'bigint',
  key_line: 'text',
})
const COLUMNS = completions.names.replace(', budget_hold, budget_month, key_hold, key_line', '')

// The rows, and their cost added to each account's month in account_spend by the same statement (in key order, so
// that two processes' batches lock the accounts' rows in one order) and to each key's in key_spend, and the budget
// holds of their calls released (sql/041, sql/047): each hold's row only after its account's spend row (the join
// waits for it), the order a reservation locks them in.
const insert = (sql: postgres.ISql, process: string, rows: CompletionRecord[]) =>
  sql`with r as (select * from ${completions.from(sql, rows)}),
    written as (insert into completions (${sql.unsafe(COLUMNS)}) select ${sql.unsafe(COLUMNS)} from r),
    spent as (
      insert into account_spend as s (account_id, month, spent_micros)
      select account_id, date_trunc('month', created_at at time zone 'UTC')::date, sum(coalesce(cost_micros, 0))
      from r where cost_micros is not null or budget_hold > 0 or key_hold > 0 group by 1, 2 order by 1, 2
      on conflict (account_id, month) do update set spent_micros = s.spent_micros + excluded.spent_micros
      returning account_id),
    key_spent as (
      insert into key_spend as s (prefix, month, spent_micros)
      select r.key_prefix, date_trunc('month', r.created_at at time zone 'UTC')::date, sum(r.cost_micros)
      from r join (select distinct account_id from spent) a using (account_id)
      where r.cost_micros is not null and exists (select 1 from api_keys k where k.prefix = r.key_prefix)
      group by 1, 2 order by 1, 2
      on conflict (prefix, month) do update set spent_micros = s.spent_micros + excluded.spent_micros),
    key_held as (
      update key_budget_holds h set micros = greatest(0, h.micros - held.micros)
      from (select account_id, key_line, budget_month as month, sum(key_hold) as micros from r where key_hold > 0
            group by 1, 2, 3) held join (select distinct account_id from spent) s using (account_id)
      where h.prefix = held.key_line and h.month = held.month and h.process_id = ${process}),
    held as (select account_id, budget_month as month, sum(budget_hold) as micros from r where budget_hold > 0 group by 1, 2)
    update budget_holds h set micros = greatest(0, h.micros - held.micros)
    from held join (select distinct account_id from spent) s using (account_id)
    where h.account_id = held.account_id and h.month = held.month and h.process_id = ${process}`

export interface Recorder {
  record(row: CompletionRecord): void
  flush(): Promise<void>
  close(): Promise<void>
}

// Completion records are written in batches off the response path, at most flushMs after they are recorded; a failed
// batch is kept and retried, and close() writes whatever is left, so a clean shutdown loses nothing.
export function createRecorder(
  sql: Sql,
  log: Logger,
  // This process's id in the quota's leases: its budget holds' (sql/041).
  process: string,
  // The server sends mail: a spend that crosses a budget's line mails the owners too (sql/047).
  { flushMs = 200, batch = 500, maxPending = 100_000, mail = false } = {}
): Recorder {
  let pending: CompletionRecord[] = []
  let flushing: Promise<void> | null = null

  async function write() {
    while (pending.length > 0) {
      const rows = pending.slice(0, batch)
      if (mail)
        await sql.begin(async (tx) => {
          await tx`select set_config('studio.mail', 'on', true)`
          await insert(tx, process, rows)
        })
      else await insert(sql, process, rows)
      pending = pending.slice(rows.length)
    }
  }

  const flush = (): Promise<void> =>
    (flushing ??= write()
      .catch((e) => {
        log.warn('completion records not written yet; will retry', {
          pending: pending.length,
          err: String((e as Error).message),
        })
        if (pending.length > maxPending) pending = pending.slice(pending.length - maxPending)
        throw e
      })
      .finally(() => (flushing = null)))

  // A timer only while rows wait (an idle process does not wake for nothing): set by the first row after a flush,
  // and again after a flush that left rows (a failed batch is retried flushMs later).
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const arm = () => {
    if (!closed) timer ??= setTimeout(due, flushMs).unref()
  }
  const due = () => {
    timer = null
    flush()
      .catch(() => {})
      .finally(() => pending.length && arm())
  }

  return {
    record(row) {
      pending.push(row)
      if (pending.length >= batch) flush().catch(() => {})
      arm()
    },
    flush,
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      await flushing?.catch(() => {})
      for (let i = 0; i < 3 && pending.length > 0; i++) {
        try {
          await flush()
        } catch {
          await new Promise((r) => setTimeout(r, 500))
        }
      }
      if (pending.length) log.error('completion records lost at shutdown', { count: pending.length })
    },
  }
}
