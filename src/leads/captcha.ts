import type { KeyCaptcha, CaptchaProvider } from '../accounts/key-captcha.js'
import { ApiError } from '../http/errors.js'
import type { NewLead } from './insert.js'

// A lead's CAPTCHA token, checked with the provider's siteverify (or STUDIO_CAPTCHA_VERIFY_URL's stand-in) through
// undici: the token, the key's secret and the client's address, form-encoded, as each provider documents.
// 'verified': `success` true, a `hostname` of one of the key's origins and, for a reCAPTCHA v3 key with a minimum,
// a score at least that. 'failed': anything else the provider answers, or no token. 'unverified': no answer in
// VERIFY_TIMEOUT_MS, no connection, a 5xx or an answer that is not JSON: the lead is stored and delivered all the
// same (flagged), so that a provider's outage never loses one.

const SITEVERIFY: Record<CaptchaProvider, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
}

// The form field each provider's widget puts its token in.
export const TOKEN_FIELDS: Record<CaptchaProvider, string> = {
  turnstile: 'cf-turnstile-response',
  hcaptcha: 'h-captcha-response',
  recaptcha: 'g-recaptcha-response',
}

// Not a setting: a person waits on it, and a provider that has not answered by then counts as down.
const VERIFY_TIMEOUT_MS = 5000
// A provider's answer is a few hundred bytes; past this it is not one.
const ANSWER_LIMIT = 64 * 1024

export type CaptchaOutcome = 'verified' | 'failed' | 'unverified'

interface CaptchaCheck {
  captcha: KeyCaptcha
  // The key's origins: the provider's `hostname` must be the host of one.
  origins: readonly string[]
  token: string | undefined
  address: string
}

export type VerifyCaptcha = (check: CaptchaCheck) => Promise<CaptchaOutcome>

// The verifier of this process; `verifyUrl` replaces every provider's siteverify.
export function captchaVerifier({ verifyUrl }: { verifyUrl?: string }): VerifyCaptcha {
  return async ({ captcha, origins, token, address }) => {
    if (!token || token.length > 4096) return 'failed'
    const body = new URLSearchParams({ secret: captcha.secret, response: token, remoteip: address }).toString()
    const answer = await siteverify(verifyUrl ?? SITEVERIFY[captcha.provider], body)
    if (answer === null) return 'unverified'
    const hosts = origins.map((o) => new URL(o).hostname)
    if (answer.success !== true || typeof answer.hostname !== 'string' || !hosts.includes(answer.hostname))
      return 'failed'
    if (captcha.provider === 'recaptcha' && captcha.minScore !== null && typeof answer.score === 'number')
      return answer.score >= captcha.minScore ? 'verified' : 'failed'
    if (captcha.provider === 'recaptcha' && captcha.minScore !== null) return 'failed'
    return 'verified'
  }
}

interface Answer {
  success?: unknown
  hostname?: unknown
  score?: unknown
}

// The provider's answer, or null when there was none to judge by.
async function siteverify(url: string, body: string): Promise<Answer | null> {
  // undici is CommonJS: its exports are the dynamic import's default (in the bundle as well).
  const { request } = (await import('undici')).default
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    })
    if (res.statusCode >= 500) {
      await res.body.dump()
      return null
    }
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of res.body) {
      chunks.push(chunk)
      size += chunk.length
      if (size > ANSWER_LIMIT) return null
    }
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    return typeof parsed === 'object' && parsed !== null ? (parsed as Answer) : null
  } catch {
    return null
  }
}

// The lead as the outcome keeps it: failed, as spam; unverified, flagged.
export function withCaptcha(lead: NewLead, outcome: CaptchaOutcome): NewLead {
  if (outcome === 'failed') return { ...lead, spamReason: 'captcha_failed' }
  if (outcome === 'unverified') return { ...lead, captchaUnverified: true }
  return lead
}

// The answer to a lead whose token failed (kept as spam all the same).
export const captchaFailed = () =>
  new ApiError({
    code: 'captcha_failed',
    message: 'The check that you are a person did not pass. Go back, complete it again and send the form once more.',
  })
