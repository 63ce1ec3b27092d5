import type { Sql } from '../storage/db.js'
import { changeKeyColumns, type KeyColumnsOf } from './key-columns.js'

// A lead key's CAPTCHA: the provider whose token a lead must carry (leads/captcha.ts checks it) and the provider's
// secret. The secret is written here and read only to verify: no listing, page, log line or audit entry holds it
// (its audit entry says only that it changed).

const CAPTCHA_PROVIDERS = ['turnstile', 'hcaptcha', 'recaptcha'] as const
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number]

export const isCaptchaProvider = (s: string): s is CaptchaProvider =>
  (CAPTCHA_PROVIDERS as readonly string[]).includes(s)

export interface KeyCaptcha {
  provider: CaptchaProvider
  secret: string
  // reCAPTCHA v3: the lowest score taken (0 to 1); null: any (v2, or v3 without a minimum).
  minScore: number | null
}

// Why `text` is not a provider's secret, or null.
export function secretRefusal(text: string) {
  if (text === '') return 'the secret is empty'
  if (text.length > 1000) return 'the secret is longer than 1000 characters'
  if (!/^[\x21-\x7e]+$/.test(text)) return 'the secret must be printable ASCII without spaces'
  return null
}

export const minScoreRefusal = (n: number) =>
  Number.isFinite(n) && n >= 0 && n <= 1 ? null : 'the minimum score is a number from 0 to 1'

export type CaptchaSet =
  | { ok: true; accountId: string; provider: CaptchaProvider | null; minScore: number | null }
  | { ok: false; reason: 'not_found' }

export interface SetKeyCaptchaOptions extends KeyColumnsOf {
  // The new CAPTCHA; null: none. A provider with `secret` left out keeps the stored secret (the dashboard's form
  // with its secret field left empty); with none stored, the caller must give one.
  captcha: (Omit<KeyCaptcha, 'secret'> & { secret?: string }) | null
}

type CaptchaRow = {
  captcha_provider: CaptchaProvider | null
  captcha_secret: string | null
  captcha_min_score: number | null
}

// Sets or clears the key's CAPTCHA with one audit entry (none when nothing changes), whose values name the provider
// and the minimum score and say whether the secret changed, never what it is.
export function setKeyCaptcha(sql: Sql, { captcha, ...key }: SetKeyCaptchaOptions) {
  const columns = ['captcha_provider', 'captcha_secret', 'captcha_min_score'] as const
  const action = 'key.captcha_changed'
  type Result = CaptchaSet | { ok: false; reason: 'no_secret' }
  return changeKeyColumns<CaptchaRow, Result>(sql, { ...key, columns, action }, (row) => {
    const provider = captcha?.provider ?? null
    const secret = captcha ? (captcha.secret ?? row.captcha_secret) : null
    if (captcha && !secret) return { result: { ok: false, reason: 'no_secret' } }
    const minScore = captcha?.provider === 'recaptcha' ? captcha.minScore : null
    const result = { ok: true as const, accountId: row.account_id, provider, minScore }
    const secretChanged = secret !== row.captcha_secret
    if (provider === row.captcha_provider && minScore === row.captcha_min_score && !secretChanged) return { result }
    const set = { captcha_provider: provider, captcha_secret: secret, captcha_min_score: minScore }
    const before = { captcha: row.captcha_provider, min_score: row.captcha_min_score }
    const after = { captcha: provider, min_score: minScore, secret_changed: secretChanged }
    return { result, change: { set, before, after } }
  })
}

// The key's CAPTCHA, secret included, for verifying a lead's token; null: none required.
export async function keyCaptcha(sql: Sql, prefix: string): Promise<KeyCaptcha | null> {
  const [k] = await sql<
    { captcha_provider: CaptchaProvider | null; captcha_secret: string | null; captcha_min_score: number | null }[]
  >`select captcha_provider, captcha_secret, captcha_min_score from api_keys where prefix = ${prefix}`
  if (!k?.captcha_provider || !k.captcha_secret) return null
  return { provider: k.captcha_provider, secret: k.captcha_secret, minScore: k.captcha_min_score }
}
