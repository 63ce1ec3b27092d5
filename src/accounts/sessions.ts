import { type Actor, audit, recordAudit } from '../audit/record.js'
import type { Sql } from '../storage/db.js'
import { newToken as token, tokenDigest as digest } from './tokens.js'

// The dashboard's browser sessions. Their tokens are random; only SHA-256 of each is stored.

const IDLE_DAYS = 7
const ABSOLUTE_DAYS = 30

export interface SessionUser {
  userId: string
  accountId: string
  email: string
  name: string | null
  role: string
  csrf: string
}

// A sign-in of the user, from the client at `address` (recorded in the audit log with the session).
export async function createSession(sql: Sql, userId: string, address: string | null): Promise<string> {
  const t = token()
  await sql.begin(async (tx) => {
    const [u] = await tx<{ email: string; account_id: string }[]>`
      with s as (insert into dashboard_sessions (token_sha256, user_id, csrf)
                 values (${digest(t)}, ${userId}, ${token()}) returning user_id)
      select u.email, u.account_id from s join users u on u.id = s.user_id`
    const actor = { kind: 'user', email: u.email, address } as const
    await recordAudit(tx, actor, { accountId: u.account_id, action: 'signin.succeeded', target: u.email })
  })
  return t
}

// The session's user, or null when the token is unknown or past its idle or absolute expiry. Seen again after a
// minute, its idle clock restarts.
export async function findSession(sql: Sql, t: string): Promise<SessionUser | null> {
  const [row] = await sql<(SessionUser & { stale: boolean })[]>`
    select u.id as "userId", u.account_id as "accountId", u.email, u.name, u.role, s.csrf,
           s.last_seen_at < now() - interval '1 minute' as stale
    from dashboard_sessions s join users u on u.id = s.user_id
    where s.token_sha256 = ${digest(t)} and s.created_at > now() - ${ABSOLUTE_DAYS} * interval '1 day'
      and s.last_seen_at > now() - ${IDLE_DAYS} * interval '1 day'`
  if (!row) return null
  if (row.stale) await sql`update dashboard_sessions set last_seen_at = now() where token_sha256 = ${digest(t)}`
  const { stale: _, ...user } = row
  return user
}

// A sign-out: recorded when the session was still there.
export const endSession = (sql: Sql, t: string, actor: Actor, accountId: string) =>
  sql.begin(async (tx) => {
    const ended = await tx`delete from dashboard_sessions where token_sha256 = ${digest(t)} returning user_id`
    const target = actor.kind === 'user' ? actor.email : null
    if (ended.length) await recordAudit(tx, actor, { accountId, action: 'signout', target })
  })

// Every session of the user but the one given (null: all of them); recorded as signout.everywhere with an actor.
export const endOtherSessions = (sql: Sql, userId: string, keep: string | null, actor?: Actor) =>
  sql.begin(async (tx) => {
    const [u] = await tx<{ email: string; account_id: string }[]>`
      with s as (delete from dashboard_sessions where user_id = ${userId}
                 and token_sha256 is distinct from ${keep === null ? null : digest(keep)} returning 1)
      select email, account_id from users where id = ${userId}`
    if (u) await audit(tx, actor, { accountId: u.account_id, action: 'signout.everywhere', target: u.email })
  })
