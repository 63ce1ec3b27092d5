import { readFileSync } from 'node:fs'
import * as v from 'valibot'

// STUDIO_PRICES: a JSON file of prices that add to or override the shipped table (completions/prices.ts), an object
// mapping an upstream model's name, as the service sends it upstream, to its USD per million tokens of each kind.

export interface Price {
  input: number
  output: number
  cache_read: number
  cache_write: number
}

const PRICE_KINDS = ['input', 'output', 'cache_read', 'cache_write'] as const

// A price above this per million tokens is a typo (the dearest models cost a few hundred).
const MOST = 100_000

// The file's prices, or why not: one line naming the entry and the field.
function read(path: string): Record<string, Price> | string {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    return `cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return `not JSON: ${(e as Error).message}`
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return 'must be a JSON object mapping upstream model names to {"input", "output", "cache_read", "cache_write"}'
  const prices: Record<string, Price> = {}
  for (const [model, entry] of Object.entries(json)) {
    const name = JSON.stringify(model)
    if (model.trim() === '') return 'an entry has an empty model name'
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      return `entry ${name} must be an object {"input", "output", "cache_read", "cache_write"}`
    const extra = Object.keys(entry).find((k) => !(PRICE_KINDS as readonly string[]).includes(k))
    if (extra) return `entry ${name} has ${JSON.stringify(extra)}, not one of input, output, cache_read, cache_write`
    const price = {} as Price
    for (const kind of PRICE_KINDS) {
      const n = (entry as Record<string, unknown>)[kind]
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > MOST)
        return `entry ${name}: ${kind} must be a number of USD per million tokens from 0 to ${MOST}`
      price[kind] = n
    }
    prices[model] = price
  }
  return prices
}

export const pricesFile = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const prices = read(dataset.value)
    if (typeof prices === 'object') return prices
    addIssue({ message: prices })
    return NEVER
  })
)
