import type postgres from 'postgres'
import { type Actor, audit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'

// An account's users: invite, change a role, remove. The last owner can be neither demoted nor removed.

export interface Member {
  id: string
  email: string
  name: string | null
  role: string
  created_at: Date
  has_password: boolean
}

export const listMembers = (sql: Sql, accountId: string) => sql<Member[]>`
  select id, email, name, role, created_at, password_hash is not null as has_password
  from users where account_id = ${accountId} order by created_at, id`

export class TeamError extends Error {}

// The account's owners and admins (who steer its webhooks), as a fragment (user_id, email) for the statement that
// queues their mails (outbox/mail.ts).
export const ownersAndAdmins = (sql: postgres.ISql, accountId: string) => sql`
  select id as user_id, email from users where account_id = ${accountId} and role in ('owner', 'admin')
  order by created_at, id`

// A new user of the account, or the same user again when the email is already one of its users.
export async function inviteMember(
  sql: Sql,
  accountId: string,
  email: string,
  role: string,
  actor?: Actor
): Promise<string> {
  return sql.begin(async (tx) => {
    const [existing] = await tx<{ id: string; account_id: string }[]>`
      select id, account_id from users where lower(email) = lower(${email})`
    if (existing && existing.account_id !== accountId) throw new TeamError('That email belongs to another account.')
    if (existing) return existing.id
    const [{ id }] = await tx<{ id: string }[]>`
      insert into users (account_id, email, role) values (${accountId}, ${email}, ${role}) returning id`
    await audit(tx, actor, { accountId, action: 'member.invited', target: email, after: { role } })
    return id
  })
}

// The user's role and the account's number of owners, with the account locked: two admins cannot demote its last
// two owners at once.
async function lockMember(tx: postgres.TransactionSql, accountId: string, userId: string) {
  await tx`select id from accounts where id = ${accountId} for update`
  const [user] = await tx<{ email: string; role: string; owners: number }[]>`
    select email, role, (select count(*)::int from users where account_id = ${accountId} and role = 'owner') as owners
    from users where id = ${userId} and account_id = ${accountId}`
  if (!user) throw new TeamError('There is no such user in your account.')
  return { ...user, lastOwner: user.role === 'owner' && user.owners <= 1 }
}

export async function setMemberRole(sql: Sql, accountId: string, userId: string, role: string, actor?: Actor) {
  await sql.begin(async (tx) => {
    const user = await lockMember(tx, accountId, userId)
    if (user.lastOwner && role !== 'owner') throw new TeamError('The last owner cannot be demoted.')
    if (user.role === role) return
    await tx`update users set role = ${role} where id = ${userId}`
    const [before, after] = [{ role: user.role }, { role }]
    await audit(tx, actor, { accountId, action: 'member.role_changed', target: user.email, before, after })
  })
}

// Removes the user: their keys are revoked (servers refuse them within a second), their sessions and links end.
// Each key it revokes is an entry of the audit log of its own, beside the removal's.
export async function removeMember(sql: Sql, accountId: string, userId: string, actor?: Actor) {
  await sql.begin(async (tx) => {
    const user = await lockMember(tx, accountId, userId)
    if (user.lastOwner) throw new TeamError('The last owner cannot be removed.')
    const revoked = await tx<{ prefix: string; newly: boolean }[]>`
      with old as (select prefix, revoked_at from api_keys where user_id = ${userId} or created_by = ${userId}
                   for no key update)
      update api_keys k
      set revoked_at = coalesce(k.revoked_at, now()), user_id = null, updated_at = clock_timestamp()
      from old where k.prefix = old.prefix returning k.prefix, old.revoked_at is null as newly`
    await tx`delete from users where id = ${userId}`
    await audit(tx, actor, { accountId, action: 'member.removed', target: user.email, before: { role: user.role } })
    for (const k of revoked.filter((r) => r.newly))
      await audit(tx, actor, { accountId, action: 'key.revoked', target: k.prefix })
  })
}
