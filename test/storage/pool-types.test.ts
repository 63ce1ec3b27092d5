import t from 'tap'
import type postgres from 'postgres'
import { skipTypeFetches } from '../../src/storage/db.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

// Once the pool knows the array types (the start's first query taught it), a connection it opens later does not ask
// for them again, and still reads and writes arrays. postgres.js prepares each statement by name on its connection,
// so the type query shows in the first connection's pg_prepared_statements and must not in a later one's.

// On the connection that runs it: its pid, an array sent and read back, and whether the type query was prepared
// there (the pattern is split, so that this statement's own text does not match it).
const look = (sql: postgres.ISql) => sql<{ pid: number; xs: string[]; typed: boolean }[]>`
  select pg_backend_pid() as pid, ${sql.array(['a', 'b,c'])}::text[] as xs,
         exists (select from pg_prepared_statements where position('typ' || 'array' in statement) > 0) as typed`

const embedded = !process.env.DATABASE_URL && 'the embedded database serves one connection at a time'
t.test('a connection opened later skips the type query', { skip: embedded }, async (t) => {
  const db = await openTestDatabase(t, await testDatabase(t))
  skipTypeFetches(db.raw)
  await db.raw.begin(async (first) => {
    const [one] = await look(first)
    t.ok(one.typed, 'the first connection asked for the array types')
    // The transaction holds the first connection: the pool opens another for this query.
    const [two] = await look(db.raw)
    t.not(two.pid, one.pid, 'a second connection')
    t.same(two.xs, ['a', 'b,c'], 'reads an array as an array')
    t.notOk(two.typed, 'and did not ask for the array types')
  })
})
