import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { leadFilter, leadsPage, matching } from '../../src/leads/search.js'
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

// The dashboard's list filters stay indexed (issue 47): with sequential scans priced out, each filter's page is an
// ordered index walk over the account's leads (no Seq Scan, no Sort), so that a page costs the same at any depth.
t.test("each of the list's filters is served by an index, in order", async (t) => {
  const [{ id: userId }] = await sql<{ id: string }[]>`select id from users where email = 'pages@example.com'`
  await sql`
    insert into leads (account_id, key_prefix, name, email, service, message, status, assignee_id, spam, created_at)
    select ${accountId}, ${prefix}, 'Lead ' || i, 'l' || i || '@example.com', 'web', 'hi',
           (array['new', 'contacted', 'qualified', 'won', 'lost'])[1 + i % 5], case when i % 3 = 0 then ${userId}::uuid end,
           i % 50 = 0, now() - i * interval '1 minute'
    from generate_series(1, 5000) i`
  await sql`analyze leads`
  const filters = {
    none: leadFilter(null, null, null),
    status: leadFilter(null, null, null, null, { status: 'won' }),
    'assigned to me': leadFilter(null, null, null, null, { assignee: 'me', me: userId }),
    'assigned to a user': leadFilter(null, null, null, null, { assignee: userId }),
    nobody: leadFilter(null, null, null, null, { assignee: 'nobody' }),
    'status and assignee': leadFilter(null, null, null, null, { status: 'new', assignee: userId }),
    dates: leadFilter(null, '2026-01-01', '2030-01-01'),
    spam: leadFilter(null, null, null, 'spam'),
  }
  for (const [name, f] of Object.entries(filters)) {
    const plan = await sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`
      const [row] = await tx<{ 'QUERY PLAN': unknown }[]>`
        explain (format json) select id from leads where ${matching(sql, accountId, f)}
        order by created_at desc, id desc limit 51`
      return JSON.stringify(row['QUERY PLAN'])
    })
    t.notMatch(plan, /"Node Type":"Seq Scan"/, `${name}: no sequential scan`)
    t.notMatch(plan, /"Node Type":"Sort"/, `${name}: in the index's order, no sort`)
    // Unassigned leads are most leads: a walk of the account's index finds a page of them at once.
    const held = { status: /status/, 'assigned to me': /assignee_id/, 'assigned to a user': /assignee_id/ }[name]
    if (held) t.match(plan, new RegExp(`"Index Cond":"[^"]*${held.source}`), `${name}: the index holds the filter`)
    if (name === 'status and assignee') t.match(plan, /"Index Cond":"[^"]*(status|assignee_id)/, `${name}: one held`)
  }
})
