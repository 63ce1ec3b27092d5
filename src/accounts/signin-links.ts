import { type Actor, audit, recordAudit } from '../audit/record.js'
import { type MailMessage, queueLinkMail } from '../outbox/mail.js'
import type { Sql } from '../storage/db.js'
import { newToken, tokenDigest } from './tokens.js'

// One-time sign-in links: a user opens one to set a password and sign in to the dashboard.

const LINK_HOURS = 24

// A link not yet stored: its token (only its hash is kept) and the URL that carries it, from which its mail is made.
export interface SigninLink {
  token: string
  url: string
}

export function newSigninLink(publicUrl: string): SigninLink {
  const token = newToken()
  return { token, url: `${publicUrl.replace(/\/+$/, '')}/dashboard/link/${token}` }
}

export interface CreateLinkOptions {
  userId: string
  link: SigninLink
  // With mail on, the link's mail (dashboard/mail.ts says it), queued in the link's transaction.
  mail?: { kind: 'signin' | 'invite'; message: MailMessage }
  actor?: Actor
}

// Stores the link for the user, valid 24 hours. `mailed`: its mail is queued.
export async function createSigninLink(sql: Sql, { userId, link, mail, actor }: CreateLinkOptions) {
  const mailed = await sql.begin(async (tx) => {
    const [made] = await tx<{ expiresAt: Date; accountId: string; email: string; now: Date }[]>`
      with l as (
        insert into signin_links (token_sha256, user_id, expires_at)
        values (${tokenDigest(link.token)}, ${userId}, now() + ${LINK_HOURS} * interval '1 hour')
        returning user_id, expires_at
      )
      select l.expires_at as "expiresAt", u.account_id as "accountId", u.email, now()
      from l join users u on u.id = l.user_id`
    await audit(tx, actor, { accountId: made.accountId, action: 'signin_link.created', target: made.email })
    if (!mail) return false
    const { accountId, email, expiresAt } = made
    return queueLinkMail(tx, { ...mail, accountId, userId, email, expiresAt }, made.now)
  })
  return { url: link.url, mailed }
}

export async function linkIsValid(sql: Sql, t: string): Promise<{ email: string } | null> {
  const [row] = await sql<{ email: string }[]>`
    select u.email from signin_links l join users u on u.id = l.user_id
    where l.token_sha256 = ${tokenDigest(t)} and l.used_at is null and l.expires_at > now()`
  return row ?? null
}

// Uses the link up (once: a second use finds nothing), sets the password and ends the user's sessions. The password
// change is recorded as the user's, from `address`.
export async function redeemLink(sql: Sql, t: string, passwordHash: string, address: string | null) {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ user_id: string }[]>`
      update signin_links set used_at = now()
      where token_sha256 = ${tokenDigest(t)} and used_at is null and expires_at > now() returning user_id`
    if (!row) return null
    const [u] = await tx<{ email: string; account_id: string }[]>`
      update users set password_hash = ${passwordHash} where id = ${row.user_id} returning email, account_id`
    await tx`delete from dashboard_sessions where user_id = ${row.user_id}`
    const entry = {
      accountId: u.account_id,
      action: 'password.changed',
      target: u.email,
      after: { via: 'link' },
    } as const
    await recordAudit(tx, { kind: 'user', email: u.email, address }, entry)
    return row.user_id
  })
}
