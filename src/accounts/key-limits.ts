import type postgres from 'postgres'
import { type Actor, audit } from '../audit/record.js'
import { budgetLine } from './key-budget.js'
import { changeKeyLine, type KeyLineOf, type NewestKey } from './key-line.js'
import { seedKeyUsage } from '../quota/key-counts.js'
import type { Sql } from '../storage/db.js'

// A key's own limits: requests in any 60 s, completions a month and the model aliases it may call, each null when the
// key has none of its own. What applies is always the lower of the key's and the account's (STUDIO_RATE_LIMIT, the
// plan's quota): the pipeline takes the lower rate limit (http/authenticate.ts), and a capped key's calls hold a unit
// of the key's and one of its account's (quota/ticket-pair.ts). Models: completions/aliases.ts refuses another alias.
export interface KeyLimits {
  rateLimit: number | null
  monthlyCompletions: number | null
  models: string[] | null
  // Input plus output tokens in any 60 s (cache reads not counted; completions/tokens-per-minute.ts); absent: as it
  // was (a key made without it has none).
  tokensPerMinute?: number | null
}

// The largest value a limit may take (an integer column).
const MAX_LIMIT = 2_147_483_647

// A limit as written on the command line or in a form: a whole number (at least `min`), or `none`; undefined when it
// is neither.
export function parseLimit(text: string, min: number): number | null | undefined {
  const t = text.trim()
  if (t.toLowerCase() === 'none') return null
  if (!/^\d{1,10}$/.test(t)) return undefined
  const n = Number(t)
  return n >= min && n <= MAX_LIMIT ? n : undefined
}

// The smallest value of each: a rate limit of 0 would be a revoked key; a monthly cap of 0 allows no completions.
export const LIMIT_MIN = { rateLimit: 1, monthlyCompletions: 0, tokensPerMinute: 1 } as const

// A key's models as named on the command line or in a form: `all` (null: every alias), or aliases among `configured`
// (`primary`, `fast`, STUDIO_MODEL_ALIASES: ops/model-aliases.ts), each once, in the order of `configured`; else why
// not, naming the configured aliases.
export function parseModels(names: readonly string[], configured: readonly string[]): KeyLimits['models'] | string {
  const named = names.map((n) => n.trim()).filter(Boolean)
  if (named.length === 1 && named[0].toLowerCase() === 'all') return null
  const expected = `the configured aliases are ${configured.join(', ')}`
  if (!named.length) return `no model alias named; ${expected} (or all)`
  const unknown = [...new Set(named.filter((n) => !configured.includes(n)))]
  if (unknown.length)
    return `unknown model alias ${unknown.map((n) => JSON.stringify(n.slice(0, 64))).join(', ')}; ${expected}`
  return configured.filter((a) => named.includes(a))
}

const sameModels = (a: KeyLimits['models'], b: KeyLimits['models']) =>
  a === b || (a !== null && b !== null && a.join() === b.join())

export type Limited = { ok: true; accountId: string; before: KeyLimits; after: KeyLimits } | { ok: false }

// The limits as the audit log shows them; models only when a key has (or had, `withModels`) a list, and tokens per
// minute only when it has (or had, `withTokens`) one, so that the entries of keys that never had one stay as they were.
export const limitValues = (l: KeyLimits, withModels = l.models !== null, withTokens = l.tokensPerMinute != null) => ({
  rate_limit: l.rateLimit,
  monthly_completions: l.monthlyCompletions,
  ...(withModels && { models: l.models }),
  ...(withTokens && { tokens_per_minute: l.tokensPerMinute ?? null }),
})

export interface SetKeyLimitsOptions extends KeyLineOf {
  // The limits to set; the others stay.
  change: Partial<KeyLimits>
  // The monthly budget in micro-dollars to set with them (null lifts it; key-budget.ts); absent: as it was.
  budget?: number | null
  actor?: Actor
}

// Sets the limits that `change` names of the key `prefix`'s line: its newest key and the rotated keys in their grace
// period, which share one count (sql/027). updated_at moves so that every server drops its cached copies within a
// poll. A change is one entry in the audit log (its target: the newest key), with `actor`; setting nothing new
// records nothing. A `budget` is set in the same transaction, with its own entry: a form's limits and budget are
// saved together or not at all.
export function setKeyLimits(sql: Sql, { change, budget, actor, ...key }: SetKeyLimitsOptions): Promise<Limited> {
  return changeKeyLine(sql, key, async (tx, newest) => {
    const limited = await limitLine(tx, newest, change, actor)
    if (budget !== undefined) await budgetLine(tx, newest, budget, actor)
    return limited
  })
}

// The change itself, on the locked newest key of a line and every key counting as it.
async function limitLine(
  tx: postgres.TransactionSql,
  row: NewestKey,
  change: Partial<KeyLimits>,
  actor?: Actor
): Promise<Limited> {
  const before = {
    rateLimit: row.rate_limit,
    monthlyCompletions: row.monthly_completions,
    models: row.models,
    tokensPerMinute: row.tokens_per_minute,
  }
  const after = {
    tokensPerMinute: change.tokensPerMinute === undefined ? before.tokensPerMinute : change.tokensPerMinute,
    rateLimit: change.rateLimit === undefined ? before.rateLimit : change.rateLimit,
    monthlyCompletions: change.monthlyCompletions === undefined ? before.monthlyCompletions : change.monthlyCompletions,
    models: change.models === undefined ? before.models : change.models,
  }
  const result = { ok: true as const, accountId: row.account_id, before, after }
  if (
    after.rateLimit === before.rateLimit &&
    after.monthlyCompletions === before.monthlyCompletions &&
    after.tokensPerMinute === before.tokensPerMinute &&
    sameModels(after.models, before.models)
  )
    return result
  const models = after.models && tx.array(after.models)
  await tx`
    update api_keys set rate_limit = ${after.rateLimit}, monthly_completions = ${after.monthlyCompletions},
      models = ${models}, tokens_per_minute = ${after.tokensPerMinute}, updated_at = clock_timestamp()
    where prefix = ${row.prefix} or counts_as = ${row.prefix}`
  if (before.monthlyCompletions === null && after.monthlyCompletions !== null)
    await seedKeyUsage(tx, row.prefix, row.account_id)
  const withModels = before.models !== null || after.models !== null
  const withTokens = before.tokensPerMinute !== null || after.tokensPerMinute !== null
  const entry = {
    before: limitValues(before, withModels, withTokens),
    after: limitValues(after, withModels, withTokens),
  }
  await audit(tx, actor, { accountId: row.account_id, action: 'key.limited', target: row.prefix, ...entry })
  return result
}
