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

export async function createSession(sql: Sql, userId: string): Promise<string> {
  const t = token()
  await sql`insert into dashboard_sessions (token_sha256, user_id, csrf) values (${digest(t)}, ${userId}, ${token()})`
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

export const endSession = (sql: Sql, t: string) => sql`delete from dashboard_sessions where token_sha256 = ${digest(t)}`

// Every session of the user but the one given (null: all of them).
export const endOtherSessions = (sql: Sql, userId: string, keep: string | null) =>
  sql`delete from dashboard_sessions where user_id = ${userId}
      and token_sha256 is distinct from ${keep === null ? null : digest(keep)}`
