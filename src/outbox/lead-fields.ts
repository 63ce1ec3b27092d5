import * as v from 'valibot'

// A lead's fields as the API takes them and its lead.created event carries them, declared here, below both the
// API's schemas (api/schemas.ts adds the honeypot) and the event catalogue, so that the two cannot drift.

// PostgreSQL text refuses NUL, and lone surrogates cannot be stored as UTF-8: both are refused as input.
export const text = (max: number, min = 0) =>
  v.pipe(
    v.string(),
    v.minLength(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`),
    v.maxLength(max, `must be at most ${max} characters`),
    v.check((s) => !s.includes('\u0000'), 'must not contain NUL characters'),
    v.check((s) => s.isWellFormed(), 'must be well-formed Unicode (no lone surrogates)')
  )

const required = (max: number) =>
  v.pipe(
    text(max),
    v.check((s) => s.trim() !== '', 'must not be blank')
  )
// The one email check: leads' addresses, the dashboard's invitations, the CLI's --email.
export const Email = v.pipe(text(254, 1), v.email('must be an email address'))

export const LEAD_FIELDS = {
  name: v.pipe(required(200), v.description('Name of the person asking.')),
  email: v.pipe(Email, v.description('Where to answer.')),
  service: v.pipe(required(200), v.description('The service the lead is interested in.')),
  message: v.pipe(required(10_000), v.description('What the lead wrote.')),
  phone: v.optional(text(50)),
  company: v.optional(text(200)),
  budget: v.optional(text(100)),
  locale: v.optional(text(35)),
  source: v.optional(text(200)),
  utm: v.optional(
    v.strictObject({
      source: v.optional(text(200)),
      medium: v.optional(text(200)),
      campaign: v.optional(text(200)),
    })
  ),
}
