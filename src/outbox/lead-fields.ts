import * as v from 'valibot'

// A lead's fields as the API takes them and its lead.created event carries them, declared here, below both the
// API's schemas (api/schemas.ts adds the honeypot) and the event catalogue, so that the two cannot drift.

// Each check below is declared in the OpenAPI document as the JSON Schema keyword a client's validator reads
// (`pattern`, ECMA-262 that means the same read by code units or, with the `u` flag, by code points; `maxLength`,
// which counts code points): the document says exactly what the server takes.
const CHAR = String.raw`(?:[^\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])`
const NOT_SPACE = String.raw`(?:[^\s\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])`
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?'
const PATTERNS = {
  wellFormed: `^${CHAR}*$`,
  // String.prototype.trim removes what `\s` matches (WhiteSpace and LineTerminator both).
  notBlank: String.raw`^\s*${NOT_SPACE}${CHAR}*$`,
  // A dot-atom local part at a domain of at least two labels (an IP address's dotted digits included): the
  // addresses JSON Schema's `format: email` takes, but quoted local parts and address literals.
  email: `^${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${LABEL}$`,
}
const EMAIL = new RegExp(PATTERNS.email)
export const isEmailAddress = (s: string) => EMAIL.test(s)

// PostgreSQL text refuses NUL, and lone surrogates cannot be stored as UTF-8: both are refused as input.
export const wellFormed = (min = 0) =>
  v.pipe(
    v.string(),
    v.minLength(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`),
    v.check((s) => !s.includes('\u0000'), 'must not contain NUL characters'),
    v.check((s) => s.isWellFormed(), 'must be well-formed Unicode (no lone surrogates)'),
    v.metadata({ pattern: PATTERNS.wellFormed })
  )

// At most `max` characters as JSON Schema counts them, in code points (an emoji is one, not two UTF-16 units).
export const text = (max: number, min = 0) =>
  v.pipe(
    wellFormed(min),
    v.check((s) => s.length <= max || [...s].length <= max, `must be at most ${max} characters`),
    v.metadata({ maxLength: max })
  )

const required = (max: number) =>
  v.pipe(
    text(max),
    v.check((s) => s.trim() !== '', 'must not be blank'),
    v.metadata({ minLength: 1, pattern: PATTERNS.notBlank })
  )
// The one email check: leads' addresses, the dashboard's invitations, the CLI's --email.
export const Email = v.pipe(
  text(254, 1),
  v.check((s) => EMAIL.test(s), 'must be an email address'),
  v.metadata({ format: 'email', pattern: PATTERNS.email })
)

// A lead's extra fields: what a form sent beyond the named ones, kept as sent. Bounded so that a lead stays a lead.
const MAX_EXTRA_FIELDS = 50
const MAX_EXTRA_NAME = 64
const MAX_EXTRA_VALUE = 10_000
const ExtraFields = v.pipe(
  v.record(
    v.pipe(
      v.string(),
      v.minLength(1, 'a field name must not be empty'),
      v.maxLength(MAX_EXTRA_NAME, `a field name must be at most ${MAX_EXTRA_NAME} characters`),
      v.check((s) => !s.includes('\u0000') && s.isWellFormed(), 'a field name must be well-formed text without NUL')
    ),
    text(MAX_EXTRA_VALUE)
  ),
  v.check((r) => Object.keys(r).length <= MAX_EXTRA_FIELDS, `must have at most ${MAX_EXTRA_FIELDS} fields`),
  v.description(
    `Any other fields of the form, by name (a flat map of strings: at most ${MAX_EXTRA_FIELDS} fields, names up to ` +
      `${MAX_EXTRA_NAME} characters, values up to ${MAX_EXTRA_VALUE} characters).`
  )
)

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
  fields: v.optional(ExtraFields),
}

// Where a lead stands once it arrived: every lead starts as new, and any status may follow any.
export const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'won', 'lost'] as const
export type LeadStatus = (typeof LEAD_STATUSES)[number]
