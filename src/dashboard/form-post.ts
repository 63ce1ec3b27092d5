import type { IncomingMessage } from 'node:http'
import * as v from 'valibot'
import type { KeyStore } from '../accounts/auth.js'
import type { FormKey } from '../accounts/key-form.js'
import { isPrefix } from '../accounts/key-format.js'
import { created, IdempotencyKey } from '../api/leads.js'
import { LeadInput } from '../api/schemas.js'
import { type AddressLimiter, limitAddress } from '../http/cors.js'
import { ApiError, type Issue } from '../http/errors.js'
import { readFormData, validate } from '../http/io.js'
import { clientAddress } from '../http/client-address.js'
import { captchaFailed, TOKEN_FIELDS, type VerifyCaptcha, withCaptcha } from '../leads/captcha.js'
import type { NewLead } from '../leads/insert.js'
import { type Exchange, type Reply, route, type Route } from '../http/route.js'
import type { Leads } from '../leads/create.js'
import type { RateLimiter } from '../limits/limits.js'
import { invalidFormPage, refusedFormPage, thankYouPage } from './form-pages.js'
import { redirect, sendHtml } from './respond.js'

// POST /forms/{prefix}: a lead from a page's plain HTML form, with no script and no secret, for a lead key opened to
// forms (accounts/key-form.ts). The browser gets pages and redirects; a request that asks for JSON (Accept) gets the
// answers of POST /api/v1/leads, so that a script may enhance the same form later.

export interface FormDeps {
  // The keys, cached (accounts/auth.ts): a post reads none from the database.
  keys: Pick<KeyStore, 'formKey'>
  leads: Leads
  // The key's rate limit (the API's limiter) and the per-address limit of public keys.
  limiter: RateLimiter
  addresses?: AddressLimiter
  bodyLimit: number
  // Checks a CAPTCHA token with its provider, for a key that requires one.
  verifyCaptcha: VerifyCaptcha
}

export function formRoute(deps: FormDeps): Route {
  return route({
    method: 'POST',
    path: '/forms/:prefix',
    uses: ['database', 'idempotency'],
    cors: true,
    ownBody: true,
    summary: 'A lead from an HTML form',
    handle: (x) => formPost(deps, x),
  })
}

const NAMED = new Set(['name', 'email', 'service', 'message', 'phone', 'company', 'budget', 'locale', 'source'])
const REQUIRED = new Set(['name', 'email', 'service', 'message'])
const UTM = new Set(['utm_source', 'utm_medium', 'utm_campaign'])
// The CAPTCHA widgets' tokens: never stored.
const TOKENS = new Set(['cf-turnstile-response', 'h-captcha-response', 'g-recaptcha-response'])

const wantsJson = (req: IncomingMessage) => /\bapplication\/json\b/i.test(req.headers.accept ?? '')

const originOf = (url: string | undefined) => {
  if (!url || !URL.canParse(url)) return null
  const u = new URL(url)
  return /^https?:$/.test(u.protocol) ? u.origin : null
}

// The page the form was on, for a link back: its Referer, when it is an http(s) URL.
const backOf = (req: IncomingMessage) => (originOf(req.headers.referer) ? (req.headers.referer as string) : null)

async function formPost(deps: FormDeps, x: Exchange): Promise<Reply> {
  const { req, res, headers } = x
  const back = backOf(req)
  try {
    const key = await openKey(deps, x.params.prefix)
    await admit(deps, req, key)
    const form = await readFormData(req, deps.bodyLimit)
    const { lead, next, idempotency } = leadOf(form)
    const stored = await createChecked(deps, req, key, { lead, idempotency, token: tokenOf(form, key) })
    if (wantsJson(req)) return created(stored)
    const to = next && key.origins.includes(originOf(next) ?? '') ? next : key.thankYou
    if (to) redirect(res, to, headers)
    else sendHtml(res, 200, thankYouPage(back), headers)
  } catch (e) {
    if (wantsJson(req) || !(e instanceof ApiError)) throw e
    const extra = Object.entries(e.headers ?? {}).flat()
    sendHtml(res, e.status, pageOf(e, back), [...headers, ...extra])
  }
  return { status: res.statusCode }
}

// The lead, its CAPTCHA token checked first when the key requires one (as on POST /api/v1/leads: a failed token keeps
// the lead as spam and the person is asked to try again; a provider that could not be asked, stored and flagged).
async function createChecked(
  deps: FormDeps,
  req: IncomingMessage,
  key: FormKey,
  { lead, idempotency, token }: { lead: NewLead; idempotency?: string; token?: string }
) {
  const owner = { accountId: key.accountId, prefix: key.prefix, autoreply: key.autoreply }
  if (!key.captcha) return deps.leads.create(owner, lead, idempotency)
  const check = { captcha: key.captcha, origins: key.origins, token, address: clientAddress(req) }
  const outcome = await deps.verifyCaptcha(check)
  if (outcome !== 'failed') return deps.leads.create(owner, withCaptcha(lead, outcome), idempotency)
  await deps.leads.create(owner, withCaptcha(lead, outcome))
  throw captchaFailed()
}

// The token of the key's provider's widget (its own field name), when the key requires a CAPTCHA.
function tokenOf(form: FormData | URLSearchParams, key: FormKey) {
  const value = key.captcha ? form.get(TOKEN_FIELDS[key.captcha.provider]) : null
  return typeof value === 'string' ? value : undefined
}

async function openKey(deps: FormDeps, prefix: string): Promise<FormKey> {
  const key = isPrefix(prefix) ? await deps.keys.formKey(prefix) : null
  if (!key) throw new ApiError({ code: 'not_found', message: 'There is no form here, or it no longer takes messages.' })
  return key
}

// The page's origin (Origin; where a browser sends none, the Referer's) must be one of the key's: nothing of a
// request from elsewhere is read or counted. Then the per-address limit and the key's own rate limit.
function admit(deps: FormDeps, req: IncomingMessage, key: FormKey) {
  const origin =
    req.headers.origin && req.headers.origin !== 'null' ? req.headers.origin : originOf(req.headers.referer)
  if (!origin || !key.origins.includes(origin))
    throw new ApiError({
      code: 'forbidden',
      message: 'This form may only be sent from the website it belongs to.',
      details: { origin: origin ? origin.slice(0, 200) : null },
    })
  limitAddress(req, key.prefix, deps.addresses)
  const hit = deps.limiter.hit(key.prefix, key.rateLimit ?? undefined)
  return hit instanceof Promise ? hit.then((v) => limited(v)) : limited(hit)
}

function limited(v: { ok: boolean; limit: number; resetS: number }) {
  if (!v.ok)
    throw new ApiError({
      code: 'rate_limited',
      message: `More than ${v.limit} messages in 60 seconds through this form; try again in a minute.`,
      details: { limit: v.limit, retry_after: v.resetS },
      headers: { 'retry-after': String(v.resetS) },
    })
}

// The form's fields as a LeadInput: the named ones, utm_* into utm, names starting with `_` read as instructions and
// never stored, a CAPTCHA token dropped, every other field an extra one. A name sent more than once (checkboxes) is
// kept as its values joined by ", "; an optional field left empty is left out.
function leadOf(form: FormData | URLSearchParams) {
  const values = new Map<string, string[]>()
  for (const [name, value] of form) {
    if (typeof value !== 'string') {
      if (value.name === '' && value.size === 0) continue // a file input left empty
      throw new ApiError({ code: 'unsupported_media_type', message: 'This form takes no files; send it without one.' })
    }
    values.set(name, [...(values.get(name) ?? []), value])
  }
  const lead: Record<string, unknown> = {}
  const utm: Record<string, string> = {}
  const fields: Record<string, string> = {}
  for (const [name, list] of values) {
    const value = list.join(', ')
    if (name.startsWith('_') || TOKENS.has(name)) continue
    if (value === '' && !REQUIRED.has(name)) continue
    if (NAMED.has(name) || name === 'website') lead[name] = value
    else if (UTM.has(name)) utm[name.slice(4)] = value
    else fields[name] = value
  }
  if (Object.keys(utm).length) lead.utm = utm
  if (Object.keys(fields).length) lead.fields = fields
  const body = validate(LeadInput, lead)
  const next = values.get('_next')?.[0]
  const idempotency = values.get('_idempotency')?.[0] || undefined
  if (idempotency !== undefined && !v.safeParse(IdempotencyKey, idempotency).success) throw invalidIdempotency()
  return { lead: body, next, idempotency }
}

const invalidIdempotency = () =>
  new ApiError({
    code: 'invalid_request',
    message: 'The request is invalid',
    details: { issues: [{ path: '_idempotency', message: 'must be 1 to 255 printable ASCII characters' }] },
  })

// What the person sees for a refusal.
function pageOf(e: ApiError, back: string | null) {
  const issues = (e.details as { issues?: Issue[] } | undefined)?.issues
  if (e.code === 'invalid_request' && issues) return invalidFormPage(issues, back)
  const titles: Partial<Record<string, string>> = {
    forbidden: 'This form cannot be sent from here',
    not_found: 'No form here',
    rate_limited: 'Too many messages',
    payload_too_large: 'The form is too large',
    captcha_failed: 'Please try again',
  }
  return refusedFormPage(titles[e.code] ?? 'The form was not sent', e.message, back)
}
