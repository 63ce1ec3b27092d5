import type { Sql } from '../storage/db.js'
import { changeKeyColumns, type KeyColumnsOf } from './key-columns.js'
import { LOOPBACK, originsRefusal } from './origins.js'
import type { CaptchaProvider, KeyCaptcha } from './key-captcha.js'
import { type Autoreply, autoreplyOf } from './key-autoreply.js'
import type { Scope } from './scopes.js'

// A lead key opened to HTML forms: a page's plain <form action="{base}/forms/{prefix}"> posts leads with it, from the
// key's origins only, so only a key that may already sit in a page (leads:write alone, with origins) can be opened.

interface KeyForm {
  open: boolean
  // Where the browser goes after a stored lead when the form names no `_next` on the key's origins; null: the
  // service's own thank-you page.
  thankYou: string | null
}

// Why `text` is not a thank-you URL (an absolute https URL, http for a loopback host), or the URL.
export function parseThankYou(text: string): { url: string } | { error: string } {
  const url = URL.canParse(text) ? new URL(text) : null
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) return { error: 'not an http(s) URL' }
  if (url.username || url.password) return { error: 'a thank-you URL holds no user or password' }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname))
    return { error: 'http is only for loopback hosts (localhost, 127.0.0.1, [::1]); use https' }
  if (url.href.length > 2000) return { error: 'at most 2000 characters' }
  return { url: url.href }
}

export type FormSet =
  | { ok: true; accountId: string; before: KeyForm; after: KeyForm }
  | { ok: false; reason: 'not_found' | 'not_a_lead_key' }

export interface SetKeyFormOptions extends KeyColumnsOf {
  // What to set; what is left out stays.
  change: Partial<KeyForm>
}

type FormRow = { scopes: Scope[]; origins: string[] | null; form: boolean; thank_you_url: string | null }

const formValues = (f: KeyForm) => ({ form: f.open, thank_you_url: f.thankYou })

// Opens or closes the key to forms and sets its thank-you URL, with one audit entry (none when nothing changes).
export function setKeyForm(sql: Sql, { change, ...key }: SetKeyFormOptions): Promise<FormSet> {
  const columns = ['scopes', 'origins', 'form', 'thank_you_url'] as const
  return changeKeyColumns<FormRow, FormSet>(sql, { ...key, columns, action: 'key.form_changed' }, (row) => {
    const before = { open: row.form, thankYou: row.thank_you_url }
    const after = {
      open: change.open ?? before.open,
      thankYou: change.thankYou === undefined ? before.thankYou : change.thankYou,
    }
    if (after.open && (originsRefusal(row.scopes) || !row.origins?.length))
      return { result: { ok: false, reason: 'not_a_lead_key' } }
    const result = { ok: true as const, accountId: row.account_id, before, after }
    if (after.open === before.open && after.thankYou === before.thankYou) return { result }
    const set = { form: after.open, thank_you_url: after.thankYou }
    return { result, change: { set, before: formValues(before), after: formValues(after) } }
  })
}

// A key open to forms, as the form endpoint needs it.
export interface FormKey {
  accountId: string
  prefix: string
  origins: string[]
  thankYou: string | null
  rateLimit: number | null
  // The CAPTCHA its leads must carry (key-captcha.ts), secret included; null: none.
  captcha: KeyCaptcha | null
  // Its autoresponder (key-autoreply.ts); null: none.
  autoreply: Autoreply | null
}

// The columns of api_keys a form key is made of (auth.ts reads them with the key, and caches the result).
export interface FormKeyRow {
  account_id: string
  prefix: string
  origins: string[] | null
  form: boolean
  thank_you_url: string | null
  rate_limit: number | null
  captcha_provider: CaptchaProvider | null
  captcha_secret: string | null
  captcha_min_score: number | null
  autoreply_subject: string | null
  autoreply_body: string | null
  autoreply_reply_to: string | null
}

// The key as the form endpoint needs it, or null when it is not open to forms (whether it is in force is the
// caller's check: revoked, expired).
export function formKeyOf(k: FormKeyRow): FormKey | null {
  if (!k.form || !k.origins?.length) return null
  const captcha =
    k.captcha_provider && k.captcha_secret
      ? { provider: k.captcha_provider, secret: k.captcha_secret, minScore: k.captcha_min_score }
      : null
  return {
    accountId: k.account_id,
    prefix: k.prefix,
    origins: k.origins,
    thankYou: k.thank_you_url,
    rateLimit: k.rate_limit,
    captcha,
    autoreply: autoreplyOf(k),
  }
}
