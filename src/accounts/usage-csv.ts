import { csvLine } from '../ops/csv.js'
import { usd } from '../ops/usd.js'
import type { Month } from '../quota/month.js'
import type { Sql } from '../storage/db.js'

// The header of the month's calls as CSV: `cost_usd` is empty for a call with no price (never 0 unless it was free).
const CALL_COLUMNS = [
  'time',
  'key',
  'model',
  'upstream',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_usd',
  'outcome',
] as const

interface CallRow {
  time: string
  key: string
  model: string
  upstream: string | null
  input_tokens: number
  output_tokens: number
  cache_read_tokens: number
  cache_write_tokens: number
  cost_micros: string | null
  outcome: string
}

// One account's calls of a month as CSV, oldest first, header line first, a chunk of lines per 500 rows read from a
// cursor (as leads/csv.ts): memory stays flat however many calls the month had. Stopping the iteration closes it.
export async function* callsCsv(sql: Sql, accountId: string, month: Month): AsyncGenerator<string> {
  yield csvLine([...CALL_COLUMNS])
  const cursor = sql<CallRow[]>`
    select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as time, key_prefix as key,
           upstream_model as model, upstream, input_tokens, output_tokens,
           cache_read_input_tokens as cache_read_tokens, cache_creation_input_tokens as cache_write_tokens,
           cost_micros::text, outcome
    from completions
    where account_id = ${accountId} and created_at >= ${month.start} and created_at < ${month.end}
    order by created_at, id`.cursor(500)
  for await (const rows of cursor)
    yield rows
      .map((r) =>
        csvLine([
          r.time,
          r.key,
          r.model,
          r.upstream,
          String(r.input_tokens),
          String(r.output_tokens),
          String(r.cache_read_tokens),
          String(r.cache_write_tokens),
          r.cost_micros === null ? null : usd(r.cost_micros),
          r.outcome,
        ])
      )
      .join('')
}
