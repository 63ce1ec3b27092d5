import type { IncomingMessage } from 'node:http'
import * as v from 'valibot'
import type { Principal } from '../accounts/auth.js'
import { keyCaptcha } from '../accounts/key-captcha.js'
import { clientAddress } from '../http/client-address.js'
import { captchaFailed, type VerifyCaptcha, withCaptcha } from '../leads/captcha.js'
import type { NewLead } from '../leads/insert.js'
import type { Sql } from '../storage/db.js'
import { BASE, route, type Reply, type Route } from '../http/route.js'
import { headerOf } from '../http/io.js'
import type { Leads } from '../leads/create.js'
import { IDEMPOTENCY_HOURS, type StoredLead } from '../leads/insert.js'
import { LeadCreated, LeadInput } from './schemas.js'

// POST /api/v1/leads: a lead from a website's form, stored once per Idempotency-Key (leads/create.ts writes it with
// its event). A key that requires a CAPTCHA has its token checked first (X-Captcha-Token; leads/captcha.ts).
export interface LeadsRouteDeps {
  sql: Sql
  verifyCaptcha: VerifyCaptcha
}

export function leadsRoute(leads: Leads, deps: LeadsRouteDeps): Route {
  return route({
    method: 'POST',
    path: `${BASE}/leads`,
    uses: ['key', 'database', 'idempotency'],
    scope: 'leads:write',
    cors: true,
    body: LeadInput,
    headers: { 'Idempotency-Key': IdempotencyKey, 'X-Captcha-Token': CaptchaToken },
    summary: 'Create a lead',
    operationId: 'createLead',
    responses: {
      201: {
        description: 'The lead is stored (or, for a retried Idempotency-Key, was stored by the first request)',
        schema: LeadCreated,
        headers: {
          'Idempotent-Replayed': {
            description:
              'Present, `true`, when this answer repeats the one given to an earlier request with the same ' +
              'Idempotency-Key.',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      },
    },
    async handle({ req, principal, body }) {
      const key = headerOf(req, 'Idempotency-Key', IdempotencyKey)
      if (!principal.captcha) return created(await leads.create(principal, body, key))
      return created(await createChecked(leads, deps, { req, principal, body, key }))
    },
  })
}

// A lead of a key that requires a CAPTCHA: a failed token keeps it as spam (without its Idempotency-Key, so that a
// retry with a new token is a new request) and answers 422 captcha_failed; a provider that could not be asked, as
// any lead, flagged.
async function createChecked(
  leads: Leads,
  deps: LeadsRouteDeps,
  { req, principal, body, key }: { req: IncomingMessage; principal: Principal; body: NewLead; key?: string }
) {
  const captcha = await keyCaptcha(deps.sql, principal.prefix)
  if (!captcha) return leads.create(principal, body, key)
  const token = headerOf(req, 'X-Captcha-Token', CaptchaToken)
  const check = { captcha, origins: principal.origins ?? [], token, address: clientAddress(req) }
  const outcome = await deps.verifyCaptcha(check)
  if (outcome !== 'failed') return leads.create(principal, withCaptcha(body, outcome), key)
  await leads.create(principal, withCaptcha(body, outcome))
  throw captchaFailed()
}

const CaptchaToken = v.pipe(
  v.string(),
  v.maxLength(4096, 'must be at most 4096 characters'),
  v.description(
    "For a key that requires a CAPTCHA: the token of the provider's widget on the page (Turnstile's, hCaptcha's or " +
      "reCAPTCHA's), checked with the provider before the lead is stored. Missing or failed: the lead is kept as " +
      'spam and the answer is 422 captcha_failed.'
  )
)

export const IdempotencyKey = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
  v.regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
  v.description(
    `Makes a retry safe: a request with the key and body of one made in the last ${IDEMPOTENCY_HOURS} hours ` +
      '(by any key of the same account) answers the lead that one created instead of creating another; ' +
      'the same key with another body is ' +
      'refused (422 idempotency_key_reused). 1 to 255 printable ASCII characters, e.g. a UUID.'
  )
)

export const created = (lead: StoredLead): Reply => ({
  status: 201,
  body: { id: lead.id, createdAt: lead.createdAt.toISOString() },
  headers: lead.replayed ? { 'idempotent-replayed': 'true' } : undefined,
})
