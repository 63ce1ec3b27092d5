import type { Sql } from '../../src/storage/db.js'

// Where `needle` occurs (any case) in every text, character, JSON, array and bytea column of every table and view of
// the schema: `table.column` names. The erasure and retention tests' proof that a person's data is nowhere.
export async function whereFound(sql: Sql, needle: string): Promise<string[]> {
  const columns = await sql<{ table_name: string; column_name: string }[]>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema()
      and data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea')`
  const found: string[] = []
  for (const c of columns) {
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from ${sql(c.table_name)}
      where position(lower(${needle}) in lower(${sql(c.column_name)}::text)) > 0`
    if (n) found.push(`${c.table_name}.${c.column_name}`)
  }
  return found
}
