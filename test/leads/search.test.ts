import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { leadFilter, leadsPage } from '../../src/leads/search.js'
import { openTestDatabase, testDatabase } from '../support/database.js'

// The leads' keyset pages over real rows: the cursor keeps created_at to the microsecond, as PostgreSQL stores it.
const { sql } = await openTestDatabase(t, await testDatabase(t))
const { accountId, prefix } = await createKey(sql, { email: 'pages@example.com' })

t.test('leads of one millisecond are neither skipped nor repeated across pages', async (t) => {
  const at = ['2026-11-24T12:00:00.123700Z', '2026-11-24T12:00:00.123400Z', '2026-11-24T12:00:00.123100Z']
  const ids: string[] = []
  for (const [i, created] of at.entries()) {
    const [{ id }] = await sql<{ id: string }[]>`
      insert into leads (account_id, key_prefix, name, email, service, message, created_at)
      values (${accountId}, ${prefix}, ${`Lead ${i}`}, 'l@example.com', 'web', 'hi', ${created}::text::timestamptz)
      returning id`
    ids.push(id)
  }
  const seen: string[] = []
  let after: string | null = null
  for (let pages = 0; pages < 5; pages++) {
    const page = await leadsPage(sql, accountId, leadFilter(null, null, null), after, 1)
    seen.push(...page.leads.map((l) => l.id))
    if (!page.next) break
    after = page.next
  }
  t.same(seen, ids, 'newest first, each once')
})
