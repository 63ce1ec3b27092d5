import type { Config } from '../ops/config.js'
import type { Price } from '../ops/prices-file.js'
import type { Usage } from './call.js'

// The price table: USD per million tokens of each kind for each upstream model the service names (its adapters'
// defaults and the docs' examples), as the providers' pricing pages gave them on PRICES_TAKEN; STUDIO_PRICES adds to
// and overrides it. docs/spend.md says where each came from.
export const PRICES_TAKEN = '2025-10-15'

const SHIPPED: Record<string, Price> = {
  // Anthropic: cache_write is the 5-minute cache write (1.25 × input), cache_read 0.1 × input.
  'claude-sonnet-4-5': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
  // OpenAI: cached input is discounted; writing the cache costs what input does.
  'gpt-4.1': { input: 2, output: 8, cache_read: 0.5, cache_write: 2 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cache_read: 0.1, cache_write: 0.4 },
  // The built-in echo upstream answers without a provider: free.
  echo: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
}

// A price in whole pico-dollars per token (USD per million tokens × 10⁶), so that a cost is summed in integers and
// rounded once: a price's digits past the sixth decimal are dropped.
type Rate = Price

export interface Prices {
  // The model's price, or null when neither the table nor STUDIO_PRICES has it.
  of(model: string): Price | null
  // A call's cost in micro-dollars from the upstream's usage, or null when its model has no price.
  costMicros(model: string, usage: Usage): number | null
}

const rateOf = (p: Price): Rate => ({
  input: Math.round(p.input * 1e6),
  output: Math.round(p.output * 1e6),
  cache_read: Math.round(p.cache_read * 1e6),
  cache_write: Math.round(p.cache_write * 1e6),
})

export function createPrices(config: Pick<Config, 'STUDIO_PRICES'>): Prices {
  const table = { ...SHIPPED, ...config.STUDIO_PRICES }
  const rates = new Map(Object.entries(table).map(([model, p]) => [model, rateOf(p)]))
  return {
    of: (model) => (Object.hasOwn(table, model) ? table[model] : null),
    costMicros(model, u) {
      const r = rates.get(model)
      if (!r) return null
      const pico =
        u.input_tokens * r.input +
        u.output_tokens * r.output +
        u.cache_read_input_tokens * r.cache_read +
        u.cache_creation_input_tokens * r.cache_write
      return Math.round(pico / 1e6)
    },
  }
}
