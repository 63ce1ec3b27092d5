import t from 'tap'
import type postgres from 'postgres'
import { openTestDatabase, testDatabase } from '../support/database.js'

// postgres.js learns the server's array types on each connection it opens (its default, fetch_types): a connection
// the pool opens later, under load, reads and writes arrays as the first one does.

const look = (sql: postgres.ISql) =>
  sql<{ pid: number; xs: string[] }[]>`select pg_backend_pid() as pid, ${sql.array(['a', 'b,c'])}::text[] as xs`

const embedded = !process.env.DATABASE_URL && 'the embedded database serves one connection at a time'
t.test('a connection opened later reads and writes arrays', { skip: embedded }, async (t) => {
  const db = await openTestDatabase(t, await testDatabase(t))
  await db.raw.begin(async (first) => {
    const [one] = await look(first)
    t.same(one.xs, ['a', 'b,c'], 'the first connection reads an array as an array')
    // The transaction holds the first connection: the pool opens another for this query.
    const [two] = await look(db.sql)
    t.not(two.pid, one.pid, 'a second connection')
    t.same(two.xs, ['a', 'b,c'], 'reads an array as an array')
  })
})
