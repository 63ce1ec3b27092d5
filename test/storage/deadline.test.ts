import t from 'tap'
import { parseConfig } from '../../src/ops/config.js'
import { openDatabase } from '../../src/storage/db.js'
import { testDatabase } from '../support/database.js'
import type { Teardown } from '../support/teardown.js'

// The pool with the per-query deadline is the driver's pool with its awaited queries bounded: a query answered too
// late fails with QUERY_DEADLINE, and everything else a caller does with it works as on the driver's own pool.

async function deadlinePool(t: Teardown) {
  const db = await openDatabase(
    parseConfig({ ...(await testDatabase(t)), STUDIO_DB_POOL: '2', STUDIO_DB_TIMEOUT_MS: '300' })
  )
  t.teardown(() => db.close())
  return db
}

const skip = !process.env.DATABASE_URL && 'the embedded database serves one connection at a time'

t.test('within the deadline, queries, fragments and helpers work as on the pool', { skip }, async (t) => {
  const { sql } = await deadlinePool(t)
  const where = sql`where n > ${1}`
  const rows = await sql`select n from (values (1), (2), (3)) as v(n) ${where} order by n`
  t.same(
    rows.map((r) => r.n),
    [2, 3],
    'a fragment nests'
  )
  t.same(await sql`select ${sql.array(['a', 'b'])}::text[] as xs`, [{ xs: ['a', 'b'] }], 'a helper of the pool')
  t.same(await sql.unsafe('select 1 as one'), [{ one: 1 }], 'unsafe')
  t.same(await sql`select 2 as two`.values(), [[2]], "a query's own methods")
  t.equal(await sql.begin(async (tx) => (await tx`select 3 as n`)[0].n), 3, 'a transaction')
})

t.test('a query not answered within the deadline fails with QUERY_DEADLINE', { skip }, async (t) => {
  const { sql, raw } = await deadlinePool(t)
  await t.rejects(sql`select pg_sleep(2)`, { code: 'QUERY_DEADLINE' }, 'awaited')
  await t.rejects(sql.unsafe('select pg_sleep(2)'), { code: 'QUERY_DEADLINE' }, 'unsafe')
  const caught = await sql`select pg_sleep(2)`.catch((e: { code?: string }) => e.code)
  t.equal(caught, 'QUERY_DEADLINE', 'by catch')
  t.same(await raw`select 1 as one from pg_sleep(0.4)`, [{ one: 1 }], 'the raw pool waits')
})
