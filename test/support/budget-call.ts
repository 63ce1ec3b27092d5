// The budget tests' call (test/completions/budget.test.ts, key-budget.test.ts): its body, its upper bound and what
// the fake upstream's usage makes it cost, in micro-dollars.
const MAX = 1000
export const body = { messages: [{ role: 'user', content: 'hi' }], max_tokens: MAX }
// claude-sonnet-4-5 (docs/spend.md): input bounded by the body's JSON bytes at the dearest input price (cache write,
// 3.75), max_tokens at 15; USD per million tokens = micro-dollars per token.
export const BOUND = Math.ceil(Buffer.byteLength(JSON.stringify(body)) * 3.75 + MAX * 15)
// The fake upstream says each call used 12 input tokens and all its max_tokens.
export const usage = {
  input_tokens: 12,
  output_tokens: MAX,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
}
export const COST = 12 * 3 + MAX * 15
export const usd = (micros: number) => (micros / 1e6).toFixed(6)
