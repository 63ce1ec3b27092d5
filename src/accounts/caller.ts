import type { Sql } from '../storage/db.js'

// Who a key speaks for: its account's plan and its user (null: the account's own key), or null when the account is
// gone.
interface Caller {
  plan: string
  user: { id: string; email: string; name: string | null; role: string } | null
}

interface CallerRow {
  plan: string
  id: string | null
  email: string
  name: string | null
  role: string
}

export async function callerOf(sql: Sql, accountId: string, userId: string | null): Promise<Caller | null> {
  const [row] = await sql<CallerRow[]>`
    select a.plan, u.id, u.email, u.name, u.role
    from accounts a left join users u on u.id = ${userId}
    where a.id = ${accountId}`
  if (!row) return null
  const user = row.id ? { id: row.id, email: row.email, name: row.name, role: row.role } : null
  return { plan: row.plan, user }
}
