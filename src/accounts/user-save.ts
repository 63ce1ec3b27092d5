import type postgres from 'postgres'
import { type Actor, audit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'

// A user made or changed by the operator (`keys create --email`, `signin-link`), and an account's plan. Each change
// is recorded in the audit log in its transaction when an actor is given.

export interface UserInput {
  email: string
  name?: string
  role?: string
  plan?: string
}

// A new account, alone (a key with no user) or for a new user.
export async function newAccount(tx: postgres.TransactionSql, plan: string, actor?: Actor): Promise<string> {
  const [{ id }] = await tx<{ id: string }[]>`insert into accounts (plan) values (${plan}) returning id`
  await audit(tx, actor, { accountId: id, action: 'account.created', target: id, after: { plan } })
  return id
}

// The user E, created with an account of its own when the email is new; name, role and plan given are set.
export const saveUser = (sql: Sql, input: UserInput, actor?: Actor) => sql.begin((tx) => ensureUser(tx, input, actor))

export async function ensureUser(tx: postgres.TransactionSql, input: UserInput, actor?: Actor) {
  const [user] = await tx<{ id: string; account_id: string; email: string; name: string | null; role: string }[]>`
    select id, account_id, email, name, role from users where lower(email) = lower(${input.email}) for update`
  if (!user) {
    const accountId = await newAccount(tx, input.plan ?? 'FREE', actor)
    const [name, role] = [input.name ?? null, input.role ?? 'owner']
    const [{ id: userId }] = await tx<{ id: string }[]>`
      insert into users (account_id, email, name, role) values (${accountId}, ${input.email}, ${name}, ${role})
      returning id`
    await audit(tx, actor, { accountId, action: 'user.created', target: input.email, after: { name, role } })
    return { userId, accountId }
  }
  const changed = (['name', 'role'] as const).filter((f) => input[f] !== undefined && input[f] !== user[f])
  if (changed.length) {
    await tx`update users set name = coalesce(${input.name ?? null}, name), role = coalesce(${input.role ?? null}, role)
      where id = ${user.id}`
    const values = (from: Partial<UserInput>) => Object.fromEntries(changed.map((f) => [f, from[f] ?? null]))
    const entry = { before: values({ name: user.name ?? undefined, role: user.role }), after: values(input) }
    await audit(tx, actor, { accountId: user.account_id, action: 'user.changed', target: user.email, ...entry })
  }
  if (input.plan) await changePlan(tx, user.account_id, input.plan, actor)
  return { userId: user.id, accountId: user.account_id }
}

// Sets the account's plan; recorded only when it changes.
async function changePlan(tx: postgres.TransactionSql, accountId: string, plan: string, actor?: Actor) {
  const [old] = await tx<{ plan: string }[]>`select plan from accounts where id = ${accountId} for no key update`
  await tx`update accounts set plan = ${plan}, updated_at = clock_timestamp() where id = ${accountId}`
  if (old.plan !== plan)
    await audit(tx, actor, { accountId, action: 'plan.changed', target: accountId, before: old, after: { plan } })
}

// The plan of the account of the user with this email; its id, or null when there is no such user.
export async function setPlan(sql: Sql, email: string, plan: string, actor?: Actor): Promise<string | null> {
  return sql.begin(async (tx) => {
    const [user] = await tx<{ account_id: string }[]>`
      select account_id from users where lower(email) = lower(${email})`
    if (!user) return null
    await changePlan(tx, user.account_id, plan, actor)
    return user.account_id
  })
}
