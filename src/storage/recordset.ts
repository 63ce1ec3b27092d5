import type postgres from 'postgres'

// Many rows as one parameter of a statement: JSON made by JSON.stringify (native, one flat string), read back by
// PostgreSQL's json_to_recordset with each column's type (a field left out is null). One statement text whatever the
// number of rows, so one prepared statement per connection; an array per column would be serialized by the driver
// element by element, and its garbage cost a lead more in collections than its JSON costs to make. PostgreSQL's json
// refuses NUL and lone surrogates in a string: the API refuses them as input (api/schemas.ts).
export function recordset<Row extends object>(columns: Record<keyof Row, string>, alias = 'r') {
  const names = Object.keys(columns).join(', ')
  const typed = Object.entries(columns)
    .map(([name, type]) => `${name} ${type}`)
    .join(', ')
  return {
    // The column names, in order, for the statement's column list.
    names,
    // `json_to_recordset(…) as alias(name type, …)`, for a FROM or a JOIN.
    from: (sql: postgres.ISql, rows: Row[]) =>
      sql`json_to_recordset(${JSON.stringify(rows)}::text::json) as ${sql.unsafe(alias)}(${sql.unsafe(typed)})`,
  }
}
