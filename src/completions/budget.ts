import type { Sql } from '../storage/db.js'
import { ApiError } from '../http/errors.js'
import type { Month } from '../quota/month.js'
import { usd } from '../ops/usd.js'
import type { CallBody } from './call.js'
import type { Prices } from './prices.js'

// What a call holds of its account's monthly budget (sql/041): the micro-dollars reserved before its upstream call,
// released with its record (record-writer.ts), or given back when it ends without one. `micros` 0: nothing held (no
// budget set).
export interface BudgetHold {
  accountId: string
  month: string
  micros: number
  // Its record was written (or is queued): the record releases the hold.
  recorded: boolean
}

export interface Budgets {
  // Reserves the call's upper bound, or throws 429 budget_exceeded (or 503 for a model with no price) before any
  // upstream call.
  reserve(accountId: string, month: Month, bound: Bound): Promise<BudgetHold>
  // A hold whose call wrote no record goes back.
  giveBack(hold: BudgetHold): Promise<void>
}

// A call's upper bound: its micro-dollars at the dearest price of every model it may reach, or the model with no price.
type Bound = { micros: number } | { unpriced: string } | { unbounded: true }

interface Reserved {
  granted: boolean
  held: string
  budget: string | null
  spent: string
  reserved: string
  alive: boolean
}

export function createBudgets(sql: Sql, process: string): Budgets {
  return {
    async reserve(accountId, month, bound) {
      const micros = 'micros' in bound ? bound.micros : 0
      const [r] = await sql<Reserved[]>`
        select granted, held::text, budget::text, spent::text, reserved::text, alive
        from studio_budget_reserve(${accountId}, ${month.month}::date, ${process}, ${micros})`
      const hold = { accountId, month: month.month, micros: Number(r.held), recorded: false }
      if (r.budget === null) return hold
      if ('unpriced' in bound) {
        await this.giveBack(hold)
        throw new ApiError({
          code: 'ai_not_configured',
          message:
            `This account has a budget, and the model ${bound.unpriced} has no price: ` +
            'add it to the file named by STUDIO_PRICES',
        })
      }
      if ('unbounded' in bound) {
        await this.giveBack(hold)
        throw new ApiError({ code: 'invalid_request', message: 'max_tokens: required when the account has a budget' })
      }
      if (!r.alive)
        throw new ApiError({ code: 'service_unavailable', message: 'The budget could not be counted; try again later' })
      if (!r.granted) throw budgetExceeded(r, month, Date.now())
      return hold
    },
    async giveBack(hold) {
      if (hold.micros === 0 || hold.recorded) return
      hold.recorded = true
      await sql`select studio_budget_give(${hold.accountId}, ${hold.month}::date, ${process}, ${hold.micros})`
    },
  }
}

const budgetExceeded = (r: Reserved, month: Month, now: number) =>
  new ApiError({
    code: 'budget_exceeded',
    message: `The monthly budget of this account does not fit this call; it resets at ${month.end.toISOString()}`,
    details: {
      budget: usd(r.budget ?? 0),
      spent: usd(r.spent),
      reserved: usd(r.reserved),
      resets_at: month.end.toISOString(),
    },
    headers: { 'retry-after': String(Math.max(1, Math.ceil((month.end.getTime() - now) / 1000))) },
  })

// The most a call can cost (docs/spend.md): its input tokens bounded by the UTF-8 bytes of its body as JSON (a token
// is at least one byte of text; the JSON's quotes and keys cover each message's few tokens of framing), each at the
// dearest of the input, cache-read and cache-write prices, plus its max_tokens at the output price; the dearest of
// the models its fallback may reach. A call with no max_tokens cannot be bounded: 422.
export function upperBound(prices: Prices, models: string[], call: CallBody): Bound {
  const { input, output } = tokensOf(call)
  let micros = 0
  for (const model of models) {
    const p = prices.of(model)
    if (!p) return { unpriced: model }
    if (typeof output !== 'number') return { unbounded: true }
    const pico =
      input * Math.round(Math.max(p.input, p.cache_read, p.cache_write) * 1e6) + output * Math.round(p.output * 1e6)
    micros = Math.max(micros, Math.ceil(pico / 1e6))
  }
  return { micros }
}

// A call's tokens at most, as the budget's bound reckons them: its input bounded by its body's UTF-8 bytes as JSON,
// and its max_tokens (not a number: the call cannot be bounded).
function tokensOf(call: CallBody): { input: number; output: unknown } {
  const body = 'bodies' in call ? (Object.values(call.bodies)[0] ?? {}) : call
  const b = body as { max_tokens?: unknown; max_completion_tokens?: unknown }
  return { input: Buffer.byteLength(JSON.stringify(body)), output: b.max_tokens ?? b.max_completion_tokens }
}

// The most tokens a call can use (input plus output), reckoned as `upperBound` does; null without max_tokens.
export function tokenBound(call: CallBody): number | null {
  const { input, output } = tokensOf(call)
  return typeof output === 'number' ? input + output : null
}
