import { csvLine } from '../ops/csv.js'
import type { Sql } from '../storage/db.js'
import { LEAD_COLUMNS, type LeadFilter, type LeadRecord, matching } from './search.js'

// The account's leads matching the filter as CSV, header line first, a chunk of lines per 200 rows read from a
// cursor: memory stays flat however many leads match. Stopping the iteration closes the cursor. The extra fields go
// in the last column as one JSON object: a column per name would need every name before the first line.
export async function* leadsCsv(sql: Sql, accountId: string, f: LeadFilter): AsyncGenerator<string> {
  yield csvLine([...LEAD_COLUMNS])
  const cursor = sql<LeadRecord[]>`
    select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at, name, email,
           company, phone, service, budget, message, locale, source, utm_source, utm_medium, utm_campaign, key_prefix,
           fields::text as fields
    from leads where ${matching(sql, accountId, f)} order by created_at desc, id desc`.cursor(200)
  for await (const rows of cursor) yield rows.map((r) => csvLine(LEAD_COLUMNS.map((c) => r[c]))).join('')
}
