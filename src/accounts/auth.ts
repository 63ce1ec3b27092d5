import type { Sql } from '../storage/db.js'
import { ApiError } from '../http/errors.js'
import { hashSecret, parseKey, prefixOf, secretMatches } from './key-format.js'
import type { Logger } from '../ops/log.js'
import { type Autoreply, autoreplyOf } from './key-autoreply.js'
import { type FormKey, type FormKeyRow, formKeyOf } from './key-form.js'
import { createKeyUsage } from './key-usage.js'
import type { Scope } from './scopes.js'

export interface Principal {
  prefix: string
  accountId: string
  userId: string | null
  // What the key may do (scopes.ts); the pipeline checks it before anything is spent.
  scopes: readonly Scope[]
  // The web origins whose pages may use the key (origins.ts); null for a key that allows none.
  origins: readonly string[] | null
  // The key's own limits (key-limits.ts; null: none): requests in any 60 s, completions a month.
  rateLimit: number | null
  monthlyCompletions: number | null
  // The model aliases it may call (key-limits.ts); null: every one the service is configured with.
  models: readonly string[] | null
  // The key whose monthly cap this key's completions count toward: itself, or the key that replaced it by rotation.
  countsAs: string
  // The key's own tokens-per-minute limit (key-limits.ts; null or absent: none), held by
  // completions/tokens-per-minute.ts.
  tokensPerMinute?: number | null
  // Its leads must carry a CAPTCHA token (key-captcha.ts; the secret is read when one is checked, not kept here).
  captcha?: boolean
  // Its account or its key has a monthly budget (completions/budget.ts): without one a call reserves nothing, and
  // skips the reservation's round trip. Kept as fresh as the key's own limits (the poll drops the entry).
  budgeted?: boolean
  // The mail its leads' writers get (key-autoreply.ts); null: none.
  autoreply?: Autoreply | null
}

interface KeyRow extends FormKeyRow {
  secret_sha256: Buffer
  user_id: string | null
  scopes: Scope[]
  monthly_completions: number | null
  models: string[] | null
  counts_as: string | null
  budgeted: boolean
  account_updated_at: Date
  tokens_per_minute: number | null
  expires_at: Date | null
  revoked_at: Date | null
  updated_at: Date
}

// The principal is what requests see; the hash and the verified key stay here.
interface CachedKey {
  principal: Principal
  hash: Buffer
  // The whole key, once it has matched `hash` (see `known`).
  verified: string | null
  // The key as the form endpoint takes it (key-form.ts), CAPTCHA secret included; null: not open to forms.
  form: FormKey | null
  expiresAt: number
  revokedAt: number
  updatedAt: number
  // Its account's row as it was read: an account change (a budget set or lifted) drops the entry.
  accountUpdatedAt: number
}

const NEVER = Number.POSITIVE_INFINITY
const DUMMY_HASH = hashSecret('no such key')
const BEARER = /^[ \t]*bearer[ \t]+(\S+)[ \t]*$/i
const MAX_CACHED = 100_000

// A key presented before, compared with the one this entry verified without an early exit (the key's length is fixed
// and public): the time taken says nothing of how much of a guess matched.
function known(key: string, entry: CachedKey): boolean {
  const verified = entry.verified
  if (verified === null || verified.length !== key.length) return false
  let diff = 0
  for (let i = 0; i < key.length; i++) diff |= key.charCodeAt(i) ^ verified.charCodeAt(i)
  return diff === 0
}

const toCached = (r: KeyRow): CachedKey => ({
  principal: {
    prefix: r.prefix,
    accountId: r.account_id,
    userId: r.user_id,
    scopes: r.scopes,
    origins: r.origins,
    rateLimit: r.rate_limit,
    monthlyCompletions: r.monthly_completions,
    models: r.models,
    countsAs: r.counts_as ?? r.prefix,
    captcha: r.captcha_provider !== null,
    budgeted: r.budgeted,
    autoreply: autoreplyOf(r),
    tokensPerMinute: r.tokens_per_minute,
  },
  hash: r.secret_sha256,
  verified: null,
  form: formKeyOf(r),
  expiresAt: r.expires_at ? r.expires_at.getTime() : NEVER,
  revokedAt: r.revoked_at ? r.revoked_at.getTime() : NEVER,
  updatedAt: r.updated_at.getTime(),
  accountUpdatedAt: r.account_updated_at.getTime(),
})

export const unauthorized = () => new ApiError({ code: 'unauthorized', message: 'Missing or invalid API key' })

export interface KeyStore {
  // Synchronous when the key is cached.
  authenticate(header: string | undefined): Principal | Promise<Principal>
  // The key `prefix` as the form endpoint takes it when it is open to forms and in force, else null; cached as the
  // keys are (a form carries no secret: the prefix names the key). Synchronous when the key is cached.
  formKey(prefix: string): FormKey | null | Promise<FormKey | null>
  // Only from the cache, never the database: the principal of a key already verified, else null.
  cached(header: string | undefined): Principal | null
  onAccountChange(fn: (accountId: string) => void): void
  // Called at each poll that sees api_keys rows changed lately (any process's change; a change is seen by a few polls),
  // with their prefixes.
  onKeysChange(fn: (prefixes: string[]) => void): void
  // One poll now (the first; the next ones come every `pollMs`).
  refresh(): Promise<void>
  flushUsage(): Promise<void>
  close(): Promise<void>
}

// Verified keys are cached (including unknown prefixes, so probing costs no database read); a poller reads
// api_keys rows changed since its last look and drops their cache entries, so a revocation, rotation or new key
// reaches every process within `pollMs`; it also tells listeners which accounts changed (a plan set). The first poll
// is the owner's `refresh()`, so that a start's queries take turns on one connection rather than each opening its own.
// last_used_at is written in batches.
export function createKeyStore(
  sql: Sql,
  log: Logger,
  { clock = Date.now, pollMs = 500, usageFlushMs = 5000, deadlineMs = 1500 } = {}
): KeyStore {
  const cache = new Map<string, CachedKey | null>()
  let since: Date | null = null
  const accountListeners: ((accountId: string) => void)[] = []
  const keyListeners: ((prefixes: string[]) => void)[] = []
  let polling: Promise<void> | null = null

  // A miss is remembered (null) only for a key whose checksum held (`authenticate`): a form's prefix has none, so
  // remembering misses there would let anyone fill the cache with made-up prefixes and clear it.
  async function load(prefix: string, { rememberMiss = true } = {}): Promise<CachedKey | null> {
    const [row] = await sql<KeyRow[]>`
      select k.prefix, k.secret_sha256, k.account_id, k.user_id, k.scopes, k.origins, k.rate_limit,
             k.monthly_completions, k.models, k.counts_as, k.tokens_per_minute, k.form, k.thank_you_url, k.captcha_provider,
             k.captcha_secret, k.captcha_min_score, k.autoreply_subject, k.autoreply_body, k.autoreply_reply_to,
             (k.budget_micros is not null or a.budget_micros is not null) as budgeted,
             a.updated_at as account_updated_at, k.expires_at, k.revoked_at, k.updated_at
      from api_keys k join accounts a on a.id = k.account_id where k.prefix = ${prefix}`
    const entry = row ? toCached(row) : null
    if (!entry && !rememberMiss) return null
    if (cache.size >= MAX_CACHED) cache.clear()
    cache.set(prefix, entry)
    return entry
  }

  // One round trip: the database's time, and the keys and accounts changed since the last look.
  async function refresh() {
    const changed = await sql<{ kind: 'now' | 'key' | 'account'; id: string; at: Date }[]>`
      select 'now'::text as kind, ''::text as id, now() as at
      union all select 'key', prefix, updated_at from api_keys where updated_at > ${since}
      union all select 'account', id::text, updated_at from accounts where updated_at > ${since}`
    const now = changed.find((r) => r.kind === 'now')!.at
    since = new Date(now.getTime() - 5000)
    const keys = changed.filter((r) => r.kind === 'key')
    const accounts = new Map<string, number>()
    for (const r of changed) if (r.kind === 'account') accountListeners.forEach((fn) => fn(r.id))
    for (const r of changed) if (r.kind === 'account') accounts.set(r.id, r.at.getTime())
    if (accounts.size) dropAccounts(accounts)
    if (keys.length) {
      const prefixes = keys.map((r) => r.id)
      keyListeners.forEach((fn) => fn(prefixes))
    }
    for (const r of keys) {
      const entry = cache.get(r.id)
      if (entry === undefined || (entry && entry.updatedAt === r.at.getTime())) continue
      cache.delete(r.id)
    }
  }

  // The entries of keys whose account changed since they were read (its budget is on the principal); a change is seen
  // by a few polls, and only the first finds entries older than it.
  function dropAccounts(changed: Map<string, number>) {
    for (const [prefix, entry] of cache) {
      const at = entry ? changed.get(entry.principal.accountId) : undefined
      if (at !== undefined && at !== entry?.accountUpdatedAt) cache.delete(prefix)
    }
  }

  const usage = createKeyUsage(sql, deadlineMs)
  const flushUsage = usage.flush

  // `key` (well formed, its checksum right) against the entry of its prefix. A key that matched is kept on the entry,
  // so its next request is compared with it instead of hashed again; the entry (bounded by MAX_CACHED) is dropped when
  // its row changes, and with it the key.
  function verify(key: string, secret: string, entry: CachedKey | null): Principal {
    const ok = secretMatches(secret, entry ? entry.hash : DUMMY_HASH)
    // A copy: `key` is a slice of the Authorization header (up to 16 KiB of it), which it would keep alive.
    if (ok && entry) entry.verified = Buffer.from(key, 'latin1').toString('latin1')
    return admit(entry, ok)
  }

  const inForce = (entry: CachedKey, now: number) => entry.revokedAt > now && entry.expiresAt > now
  const openForm = (entry: CachedKey | null) => (entry && inForce(entry, clock()) ? entry.form : null)

  function admit(entry: CachedKey | null, ok: boolean): Principal {
    const now = clock()
    if (!entry || !ok || !inForce(entry, now)) throw unauthorized()
    usage.mark(entry.principal.prefix, now)
    return entry.principal
  }

  // One poll at a time: one asked for while another runs shares it.
  const poll = () => (polling ??= refresh().finally(() => (polling = null)))
  const tick = () => void poll().catch((e) => log.debug('key refresh failed', { err: String(e) }))
  const poller = setInterval(tick, pollMs).unref()
  const flusher = setInterval(
    () => flushUsage().catch((e) => log.warn('last_used_at flush failed', { err: String(e) })),
    usageFlushMs
  ).unref()

  return {
    cached(header) {
      const m = header ? BEARER.exec(header) : null
      const key = m ? m[1] : ''
      const entry = m ? cache.get(prefixOf(key)) : undefined
      if (!entry) return null
      try {
        if (known(key, entry)) return admit(entry, true)
        const parsed = parseKey(key)
        return parsed ? verify(key, parsed.secret, entry) : null
      } catch {
        return null
      }
    },
    authenticate(header) {
      const key = header ? BEARER.exec(header)?.[1] : undefined
      const parsed = key ? parseKey(key) : null
      if (!key || !parsed) throw unauthorized()
      const entry = cache.get(parsed.prefix)
      if (entry === undefined) return load(parsed.prefix).then((loaded) => verify(key, parsed.secret, loaded))
      return verify(key, parsed.secret, entry)
    },
    formKey(prefix) {
      const entry = cache.get(prefix)
      return entry === undefined ? load(prefix, { rememberMiss: false }).then(openForm) : openForm(entry)
    },
    onAccountChange: (fn) => void accountListeners.push(fn),
    onKeysChange: (fn) => void keyListeners.push(fn),
    refresh: poll,
    flushUsage,
    async close() {
      clearInterval(poller)
      clearInterval(flusher)
      await polling?.catch(() => {})
      await flushUsage().catch((e) => log.warn('last_used_at flush failed', { err: String(e) }))
    },
  }
}
