import * as v from 'valibot'
import { Email, LEAD_FIELDS, text, wellFormed } from '../outbox/lead-fields.js'

export { Email }

const PLANS = ['FREE', 'STARTER', 'PRO', 'ENTERPRISE'] as const
export const ROLES = ['owner', 'admin', 'member'] as const

export const LeadInput = v.pipe(
  v.strictObject({
    ...LEAD_FIELDS,
    website: v.optional(
      v.pipe(
        text(2000),
        v.description(
          'Honeypot: leave it out or empty. Meant for a form field hidden from people (bots fill every field): a ' +
            'lead with a non-empty `website` is answered 201 as usual but kept as spam, out of the leads list and ' +
            'raising no event.'
        )
      )
    ),
  }),
  v.title('LeadInput')
)
export type LeadInput = v.InferOutput<typeof LeadInput>

export const LeadCreated = v.pipe(
  v.object({
    id: v.pipe(v.string(), v.uuid(), v.description('Identifier of the new lead.')),
    createdAt: v.pipe(v.string(), v.isoTimestamp()),
  }),
  v.title('LeadCreated')
)

const User = v.object({
  id: v.pipe(v.string(), v.uuid()),
  email: v.pipe(v.string(), v.email()),
  name: v.nullable(v.string()),
  role: v.pipe(v.picklist(ROLES), v.description('owner, admin or member.')),
})

const Quota = v.pipe(
  v.object({
    limit: v.pipe(
      v.nullable(v.pipe(v.number(), v.integer())),
      v.description('Completions per calendar month (UTC); null when unlimited.')
    ),
    used: v.pipe(v.number(), v.integer()),
    remaining: v.pipe(v.nullable(v.pipe(v.number(), v.integer())), v.description('null when unlimited.')),
    resets_at: v.pipe(v.string(), v.isoTimestamp(), v.description('Start of the next calendar month, UTC.')),
  }),
  v.description('Monthly AI quota of the account; one unit is one completion the upstream answered.')
)

const decimal = v.pipe(v.string(), v.regex(/^\d+\.\d{6}$/))
const dollars = (what: string) => v.pipe(decimal, v.description(what))
const Spend = v.pipe(
  v.object({
    budget: v.pipe(v.nullable(decimal), v.description("The month's budget in USD; null when none is set.")),
    spent: dollars("USD the account's completions cost this month, at the price table's prices."),
    reserved: dollars('USD held for calls under way against the budget.'),
    remaining: v.pipe(v.nullable(decimal), v.description('USD left of the budget; null when none is set.')),
    resets_at: v.pipe(v.string(), v.isoTimestamp(), v.description('Start of the next calendar month, UTC.')),
  }),
  v.description(
    "The account's spend this calendar month (UTC), as USD decimal strings to the micro-dollar (docs/spend.md); " +
      'calls whose model has no price are not in it.'
  )
)

export const Caller = v.pipe(
  v.object({
    user: v.pipe(
      v.nullable(User),
      v.description('The user the key belongs to; null for a key issued to the account alone.')
    ),
    plan: v.picklist(PLANS),
    quota: Quota,
    spend: Spend,
  }),
  v.title('Caller')
)

export const Plan = v.picklist(PLANS)
export const Role = v.picklist(ROLES)

// The completion request's bounds and default (the SDK routes hold to the same: one quota unit, one bounded answer).
// Its text has no bound of its own: the body limit (STUDIO_BODY_LIMIT) is the one.
export const COMPLETION = { maxMessages: 1000, maxTokens: 4096, defaultMaxTokens: 1024 } as const

export const CompletionRequest = v.pipe(
  v.strictObject({
    messages: v.pipe(
      v.array(
        v.strictObject({
          role: v.pipe(v.picklist(['user', 'assistant'], 'must be "user" or "assistant"')),
          content: wellFormed(1),
        })
      ),
      v.minLength(1, 'must hold at least one message'),
      v.maxLength(COMPLETION.maxMessages, `must hold at most ${COMPLETION.maxMessages} messages`)
    ),
    model: v.optional(
      v.pipe(v.picklist(['primary', 'fast'], 'must be "primary" or "fast"'), v.description('Model alias.')),
      'primary'
    ),
    system: v.optional(wellFormed()),
    max_tokens: v.optional(
      v.pipe(
        v.number('must be a number'),
        v.integer('must be an integer'),
        v.minValue(1, 'must be at least 1'),
        v.maxValue(COMPLETION.maxTokens, `must be at most ${COMPLETION.maxTokens}`)
      ),
      COMPLETION.defaultMaxTokens
    ),
    temperature: v.optional(
      v.pipe(
        v.number('must be a number'),
        v.minValue(0, 'must be at least 0'),
        v.maxValue(1, 'must be at most 1'),
        v.description('Sent upstream only when given; otherwise the model default applies.')
      )
    ),
    stream: v.optional(
      v.pipe(
        v.boolean('must be a boolean'),
        v.description('Answer with server-sent events (`text/event-stream`): `delta`s, then `done` or `error`.')
      ),
      false
    ),
  }),
  v.title('CompletionRequest')
)
export type CompletionRequest = v.InferOutput<typeof CompletionRequest>

const count = v.pipe(v.number(), v.integer(), v.minValue(0))
export const CompletionResponse = v.pipe(
  v.object({
    model: v.pipe(v.string(), v.description('The upstream model that answered.')),
    content: v.pipe(v.string(), v.description('The generated text.')),
    stop_reason: v.nullable(v.string()),
    usage: v.object({
      input_tokens: count,
      output_tokens: count,
      cache_read_input_tokens: count,
      cache_creation_input_tokens: count,
    }),
    cost_usd: v.pipe(
      v.nullable(decimal),
      v.description(
        "What the call cost in USD (a decimal string, to the micro-dollar) from the upstream's usage and the price " +
          'table; null when its model has no price or the upstream sent no usage.'
      )
    ),
  }),
  v.title('CompletionResponse')
)

export const CompletionDelta = v.pipe(
  v.object({ text: v.pipe(v.string(), v.description('The next piece of the generated text.')) }),
  v.title('CompletionDelta')
)
