import { createHash, randomBytes } from 'node:crypto'
import type { Sql } from '../storage/db.js'

// Browser sessions and one-time sign-in links. Their tokens are random; only SHA-256 of each is stored.

const IDLE_DAYS = 7
const ABSOLUTE_DAYS = 30
const LINK_HOURS = 24

const token = () => randomBytes(32).toString('base64url')
const digest = (t: string) => createHash('sha256').update(t).digest()

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

// A one-time link for the user, valid 24 hours; only its hash is kept.
export async function createSigninLink(sql: Sql, userId: string, publicUrl: string): Promise<string> {
  const t = token()
  await sql`insert into signin_links (token_sha256, user_id, expires_at)
            values (${digest(t)}, ${userId}, now() + ${LINK_HOURS} * interval '1 hour')`
  return `${publicUrl.replace(/\/+$/, '')}/dashboard/link/${t}`
}

export async function linkIsValid(sql: Sql, t: string): Promise<{ email: string } | null> {
  const [row] = await sql<{ email: string }[]>`
    select u.email from signin_links l join users u on u.id = l.user_id
    where l.token_sha256 = ${digest(t)} and l.used_at is null and l.expires_at > now()`
  return row ?? null
}

// Uses the link up (once: a second use finds nothing), sets the password and ends the user's other sessions.
export async function redeemLink(sql: Sql, t: string, passwordHash: string): Promise<string | null> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ user_id: string }[]>`
      update signin_links set used_at = now()
      where token_sha256 = ${digest(t)} and used_at is null and expires_at > now() returning user_id`
    if (!row) return null
    await tx`update users set password_hash = ${passwordHash} where id = ${row.user_id}`
    await tx`delete from dashboard_sessions where user_id = ${row.user_id}`
    return row.user_id
  })
}
