import type postgres from 'postgres'
import { type Actor, audit } from '../audit/record.js'
import type { EventOf } from '../outbox/catalogue.js'
import { recordEvent } from '../outbox/event.js'
import type { Sql } from '../storage/db.js'
import { moveKeyCount } from '../quota/key-counts.js'
import { type KeyLimits, limitValues } from './key-limits.js'
import { generateKey } from './key-format.js'
import { SCOPES, type Scope } from './scopes.js'
import { originsRefusal } from './origins.js'
import { ApiError } from '../http/errors.js'
import { usd } from '../ops/usd.js'
import { ensureUser, newAccount, type UserInput } from './user-save.js'

export interface CreateKeyInput extends Partial<UserInput> {
  expiresAt?: Date
  // The key's own name (shown in lists), and the user who made it (default: the key's user).
  keyName?: string
  createdBy?: string
  // What the key may do (default: every scope).
  scopes?: readonly Scope[]
  // The web origins whose pages may use it (origins.ts: parsed; only for a key whose only scope is leads:write).
  origins?: readonly string[]
  // Its own limits (key-limits.ts; default: none).
  limits?: Partial<KeyLimits>
  // Its own monthly budget in micro-dollars (key-budget.ts; default: none).
  budgetMicros?: number | null
}

export interface CreatedKey {
  key: string
  prefix: string
  accountId: string
  userId: string | null
  plan: string
  expiresAt: Date | null
  scopes: Scope[]
  origins: string[] | null
}

// key.created, key.rotated and key.revoked, written in the change's own transaction so that the change and its event
// commit together; `who` is the email of the dashboard user who made it, null from the command line. Never a secret.
type KeyEvent = EventOf<'key.created' | 'key.rotated' | 'key.revoked'>
const whoOf = (actor: Actor | undefined) => (actor?.kind === 'user' ? actor.email : null)
const recordKeyEvent = (tx: postgres.TransactionSql, accountId: string, event: KeyEvent) =>
  recordEvent(tx, accountId, event, new Date())

// A key for a user (created with its own account when the email is new) or, without an email, for a new
// account of its own with no user. The CLI and the dashboard both create keys here.
// `actor`: who, for the audit log (each account, user and key made, each value changed, is one entry).
export async function createKey(sql: Sql, input: CreateKeyInput, actor?: Actor): Promise<CreatedKey> {
  const scopes = [...(input.scopes ?? SCOPES)]
  const origins = input.origins?.length ? [...input.origins] : null
  const refused = origins && originsRefusal(scopes)
  if (refused) throw new ApiError({ code: 'bad_request', message: refused })
  return sql.begin(async (tx) => {
    let accountId: string
    let userId: string | null = null
    if (input.email) ({ userId, accountId } = await ensureUser(tx, { ...input, email: input.email }, actor))
    else accountId = await newAccount(tx, input.plan ?? 'FREE', actor)
    const limits = {
      rateLimit: input.limits?.rateLimit ?? null,
      monthlyCompletions: input.limits?.monthlyCompletions ?? null,
      models: input.limits?.models ?? null,
      tokensPerMinute: input.limits?.tokensPerMinute ?? null,
    }
    const budgetMicros = input.budgetMicros ?? null
    const meta = {
      name: input.keyName ?? null,
      createdBy: input.createdBy ?? userId,
      scopes,
      origins,
      limits,
      budgetMicros,
    }
    const created = await insertKey(tx, accountId, userId, input.expiresAt ?? null, meta)
    const data = { prefix: created.prefix, name: meta.name, who: whoOf(actor) }
    await recordKeyEvent(tx, accountId, { type: 'key.created', data })
    const after = {
      name: meta.name,
      expires_at: created.expiresAt?.toISOString() ?? null,
      scopes: meta.scopes,
      ...(origins && { origins }),
      ...limitValues(limits),
      ...(budgetMicros !== null && { budget: usd(budgetMicros) }),
    }
    await audit(tx, actor, { accountId, action: 'key.created', target: created.prefix, after })
    return created
  })
}

async function insertKey(
  tx: postgres.TransactionSql,
  accountId: string,
  userId: string | null,
  expiresAt: Date | null,
  meta: {
    name: string | null
    createdBy: string | null
    scopes: Scope[]
    origins: string[] | null
    limits: KeyLimits
    budgetMicros?: number | null
  }
): Promise<CreatedKey> {
  const k = generateKey()
  const origins = meta.origins ? tx.array(meta.origins) : null
  const { rateLimit, monthlyCompletions, tokensPerMinute = null } = meta.limits
  const models = meta.limits.models && tx.array(meta.limits.models)
  await tx`
    insert into api_keys (prefix, secret_sha256, account_id, user_id, expires_at, name, created_by, scopes, origins,
      rate_limit, monthly_completions, models, tokens_per_minute, budget_micros)
    values (${k.prefix}, ${k.secretHash}, ${accountId}, ${userId}, ${expiresAt}, ${meta.name}, ${meta.createdBy},
      ${tx.array(meta.scopes)}, ${origins}, ${rateLimit}, ${monthlyCompletions}, ${models}, ${tokensPerMinute},
      ${meta.budgetMicros ?? null})`
  const [{ plan }] = await tx<{ plan: string }[]>`select plan from accounts where id = ${accountId}`
  return {
    key: k.key,
    prefix: k.prefix,
    accountId,
    userId,
    plan,
    expiresAt,
    scopes: meta.scopes,
    origins: meta.origins,
  }
}

export interface KeyListing {
  prefix: string
  name: string | null
  account_id: string
  plan: string
  email: string | null
  // The email of the user who created the key.
  creator: string | null
  created_at: Date
  last_used_at: Date | null
  expires_at: Date | null
  revoked_at: Date | null
  scopes: Scope[]
  origins: string[] | null
  rate_limit: number | null
  monthly_completions: number | null
  // The model aliases it may call; null: every one.
  models: string[] | null
  // Input plus output tokens in any 60 s (key-limits.ts); null: none.
  tokens_per_minute: number | null
  // Its monthly budget in micro-dollars, as PostgreSQL's bigint text (key-budget.ts); null: none.
  budget_micros: string | null
  // Open to HTML forms (key-form.ts), and where a form's browser goes after a stored lead.
  form: boolean
  thank_you_url: string | null
  // The CAPTCHA its leads must carry (key-captcha.ts; never its secret), and reCAPTCHA v3's minimum score.
  captcha_provider: string | null
  captcha_min_score: number | null
  status: 'active' | 'grace' | 'expired' | 'revoked'
}

// Which keys: all of them, oldest first (the operator's list), or one account's, newest first, and of those only
// the ones `createdBy` made when it is given.
export interface KeyScope {
  accountId: string
  createdBy?: string
}

const inScope = (sql: Sql, { accountId, createdBy }: KeyScope) =>
  sql`where k.account_id = ${accountId} ${createdBy ? sql`and k.created_by = ${createdBy}` : sql``}
      order by k.created_at desc, k.prefix`

export const listKeys = (sql: Sql, scope?: KeyScope) => sql<KeyListing[]>`
  select k.prefix, k.name, k.account_id, a.plan, u.email, c.email as creator, k.created_at, k.last_used_at,
         k.expires_at, k.revoked_at, k.scopes, k.origins, k.rate_limit, k.monthly_completions, k.models,
         k.tokens_per_minute, k.budget_micros::text as budget_micros, k.form, k.thank_you_url, k.captcha_provider,
         k.captcha_min_score,
         case when k.revoked_at is not null then 'revoked' when k.expires_at <= now() then 'expired'
              when k.rotated_at is not null then 'grace' else 'active' end as status
  from api_keys k join accounts a on a.id = k.account_id left join users u on u.id = k.user_id
  left join users c on c.id = k.created_by
  ${scope ? inScope(sql, scope) : sql`order by k.created_at, k.prefix`}`

// The key is revoked once: of revokes waiting on its row, only the one that revoked it records the change.
export async function revokeKey(sql: Sql, prefix: string, actor?: Actor): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [k] = await tx<{ account_id: string; name: string | null; revoked: boolean }[]>`
      with revoked as (
        update api_keys set revoked_at = now(), updated_at = clock_timestamp()
        where prefix = ${prefix} and revoked_at is null returning account_id, name)
      select account_id, name, true as revoked from revoked
      union all
      select account_id, name, false from api_keys where prefix = ${prefix} and not exists (select from revoked)`
    if (!k) return false
    if (!k.revoked) return true
    const data = { prefix, name: k.name, who: whoOf(actor) }
    await recordKeyEvent(tx, k.account_id, { type: 'key.revoked', data })
    await audit(tx, actor, { accountId: k.account_id, action: 'key.revoked', target: prefix })
    return true
  })
}

export async function accountPlan(sql: Sql, accountId: string): Promise<string | null> {
  const [row] = await sql<{ plan: string }[]>`select plan from accounts where id = ${accountId}`
  return row?.plan ?? null
}

// The account of the user with this email, or null.
export async function accountOfUser(sql: Sql, email: string): Promise<string | null> {
  const [row] = await sql<{ account_id: string }[]>`
    select account_id from users where lower(email) = lower(${email})`
  return row?.account_id ?? null
}

// How long a rotated key keeps working when no grace is chosen (`keys rotate`, the dashboard's preselected choice).
export const ROTATE_GRACE_SECONDS = 24 * 3600

export interface RotatedKey extends CreatedKey {
  email: string | null
  // When the old key stops being accepted (never later than it would have anyway), and the database's now.
  oldExpiresAt: Date
  now: Date
}

export interface RotateKeyOptions {
  prefix: string
  // How long the old key stays valid (0: not at all).
  graceSeconds: number
  // When the new key expires (default: never).
  expiresAt?: Date | null
  actor?: Actor
}

// A new key for the old key's account and user, with its scopes and limits. The old key stays valid for
// `graceSeconds` more and counts its completions as the new one (one cap between them, sql/027); updated_at moves so
// that every running server drops its cached copy within a poll.
export async function rotateKey(
  sql: Sql,
  { prefix, graceSeconds, expiresAt = null, actor }: RotateKeyOptions
): Promise<RotatedKey | null> {
  return sql.begin(async (tx) => {
    const [old] = await tx<
      {
        account_id: string
        user_id: string | null
        revoked_at: Date | null
        email: string | null
        name: string | null
        created_by: string | null
        scopes: Scope[]
        origins: string[] | null
        rate_limit: number | null
        monthly_completions: number | null
        models: string[] | null
        counts_as: string | null
        form: boolean
        thank_you_url: string | null
      }[]
    >`
      select k.account_id, k.user_id, k.revoked_at, u.email, k.name, k.created_by, k.scopes, k.origins, k.rate_limit,
             k.monthly_completions, k.models, k.counts_as, k.form, k.thank_you_url
      from api_keys k left join users u on u.id = k.user_id where k.prefix = ${prefix} for no key update of k`
    if (!old) return null
    if (old.revoked_at)
      throw new ApiError({ code: 'bad_request', message: `key ${prefix} is revoked; create a new key instead` })
    // Only the newest key of a line is rotated: the line has one count (sql/027).
    if (old.counts_as)
      throw new ApiError({ code: 'bad_request', message: `key ${prefix} was rotated; rotate ${old.counts_as} instead` })
    const created = await insertKey(tx, old.account_id, old.user_id, expiresAt, {
      name: old.name,
      createdBy: old.created_by,
      scopes: old.scopes,
      origins: old.origins,
      limits: { rateLimit: old.rate_limit, monthlyCompletions: old.monthly_completions, models: old.models },
    })
    if (old.form || old.thank_you_url)
      await tx`update api_keys set form = ${old.form}, thank_you_url = ${old.thank_you_url}
               where prefix = ${created.prefix}`
    await tx`update api_keys k set captcha_provider = o.captcha_provider, captcha_secret = o.captcha_secret,
             captcha_min_score = o.captcha_min_score
             from api_keys o where o.prefix = ${prefix} and o.captcha_provider is not null and k.prefix = ${created.prefix}`
    // The line keeps its budget (sql/047): the new key's is the old one's, counting the spend of both.
    await tx`update api_keys k set budget_micros = o.budget_micros
             from api_keys o where o.prefix = ${prefix} and o.budget_micros is not null and k.prefix = ${created.prefix}`
    await tx`update api_keys k set autoreply_subject = o.autoreply_subject, autoreply_body = o.autoreply_body,
             autoreply_reply_to = o.autoreply_reply_to
             from api_keys o where o.prefix = ${prefix} and o.autoreply_subject is not null and k.prefix = ${created.prefix}`
    await tx`update api_keys k set tokens_per_minute = o.tokens_per_minute
             from api_keys o where o.prefix = ${prefix} and o.tokens_per_minute is not null and k.prefix = ${created.prefix}`
    await moveKeyCount(tx, prefix, created.prefix)
    const [row] = await tx<{ expires_at: Date; now: Date }[]>`
      update api_keys
      set expires_at = least(expires_at, now() + ${graceSeconds} * interval '1 second'), rotated_at = now(),
        counts_as = ${created.prefix}, updated_at = clock_timestamp()
      where prefix = ${prefix} returning expires_at, now() as now`
    await tx`update api_keys set counts_as = ${created.prefix}, updated_at = clock_timestamp()
             where counts_as = ${prefix}`
    const data = { prefix, name: old.name, who: whoOf(actor), newPrefix: created.prefix }
    await recordKeyEvent(tx, old.account_id, { type: 'key.rotated', data })
    const [before, after] = [{ prefix }, { prefix: created.prefix, old_expires_at: row.expires_at.toISOString() }]
    await audit(tx, actor, { accountId: old.account_id, action: 'key.rotated', target: prefix, before, after })
    return { ...created, email: old.email, oldExpiresAt: row.expires_at, now: row.now }
  })
}
