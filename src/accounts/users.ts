import { type Actor, recordAudit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'
import { hashPassword, verifyPassword } from './passwords.js'

// A user's dashboard password: checked at sign-in and before a change, then set.

// The user whose email and password these are, or null. The same scrypt work whether or not the user exists or has
// a password: the same answer in the same time.
export async function userByPassword(sql: Sql, email: string, password: string): Promise<string | null> {
  const [user] = await sql<{ id: string; password_hash: string | null }[]>`
    select id, password_hash from users where lower(email) = lower(${email})`
  const ok = await verifyPassword(password, user?.password_hash ?? null)
  return ok ? user.id : null
}

export async function userByEmail(sql: Sql, email: string): Promise<string | null> {
  const [user] = await sql<{ id: string }[]>`select id from users where lower(email) = lower(${email})`
  return user?.id ?? null
}

export async function passwordMatches(sql: Sql, userId: string, password: string): Promise<boolean> {
  const [user] = await sql<{ password_hash: string | null }[]>`select password_hash from users where id = ${userId}`
  return verifyPassword(password, user?.password_hash ?? null)
}

export async function setPassword(sql: Sql, userId: string, password: string, actor: Actor): Promise<void> {
  const hash = await hashPassword(password)
  await sql.begin(async (tx) => {
    const [u] = await tx<{ email: string; account_id: string }[]>`
      update users set password_hash = ${hash} where id = ${userId} returning email, account_id`
    if (u) await recordAudit(tx, actor, { accountId: u.account_id, action: 'password.changed', target: u.email })
  })
}

// A sign-in refused (wrong password, or no such user: then the entry belongs to no account), by the email typed.
export const signinFailed = (sql: Sql, email: string, address: string | null) =>
  sql.begin(async (tx) => {
    const [u] = await tx<{ account_id: string; email: string }[]>`
      select account_id, email from users where lower(email) = lower(${email})`
    const entry = { accountId: u?.account_id ?? null, action: 'signin.failed', target: u?.email ?? email } as const
    await recordAudit(tx, { kind: 'user', email: u?.email ?? email, address }, entry)
  })
