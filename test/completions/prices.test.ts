import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../../src/cli/cli.js'
import { parseConfig } from '../../src/ops/config.js'
import { createPrices, PRICES_TAKEN } from '../../src/completions/prices.js'

// The price table and STUDIO_PRICES: shipped prices, the file's additions and overrides, a cost to the micro-dollar,
// and a bad file refused at start with one line naming the entry (exit 2).

const dir = mkdtempSync(join(tmpdir(), 'prices-'))
let n = 0
function file(text: string) {
  const path = join(dir, `p${n++}.json`)
  writeFileSync(path, text)
  return path
}

const usage = (input: number, output: number, read = 0, write = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: read,
  cache_creation_input_tokens: write,
})

t.test('the shipped table prices the default models; echo is free; an unknown model has no price', async (t) => {
  const prices = createPrices(parseConfig({}))
  // 1000 × 3 + 500 × 15 + 2000 × 0.30 + 100 × 3.75 micro-dollars.
  t.equal(prices.costMicros('claude-sonnet-4-5', usage(1000, 500, 2000, 100)), 3000 + 7500 + 600 + 375)
  t.equal(prices.costMicros('gpt-4.1-mini', usage(1234, 567)), Math.round(1234 * 0.4 + 567 * 1.6))
  t.equal(prices.costMicros('echo', usage(1e6, 1e6)), 0)
  t.equal(prices.costMicros('some-local-model', usage(10, 10)), null)
  t.equal(prices.of('some-local-model'), null)
  for (const model of ['claude-sonnet-4-5', 'claude-haiku-4-5', 'gpt-4.1', 'gpt-4.1-mini'])
    t.ok(prices.of(model), model)
})

t.test('STUDIO_PRICES adds models and overrides shipped ones; 0 is a price', async (t) => {
  const path = file(
    JSON.stringify({
      'gpt-4.1': { input: 1, output: 2, cache_read: 0.25, cache_write: 1 },
      'llama3.2:3b': { input: 0, output: 0, cache_read: 0, cache_write: 0 },
      odd: { input: 0.000001, output: 1234.5, cache_read: 0, cache_write: 0 },
    })
  )
  const prices = createPrices(parseConfig({ STUDIO_PRICES: path }))
  t.equal(prices.costMicros('gpt-4.1', usage(100, 100, 400)), 100 + 200 + 100)
  t.equal(prices.costMicros('llama3.2:3b', usage(5000, 5000)), 0)
  t.equal(prices.costMicros('odd', usage(1_000_000, 2)), 1 + 2469)
  t.same(prices.of('claude-haiku-4-5'), { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 })
})

t.test('a bad prices file stops the start with one line naming the entry, exit 2', async (t) => {
  for (const [text, says] of [
    ['{"gpt-4.1": {"input": 1, "output": 2, "cache_read": -1, "cache_write": 0}}', /entry "gpt-4\.1": cache_read /],
    ['{"m": {"input": 1, "output": "2", "cache_read": 0, "cache_write": 0}}', /entry "m": output /],
    ['{"m": {"input": 1, "output": 2, "cache_read": 0}}', /entry "m": cache_write /],
    ['{"m": {"input": 1, "output": 2, "cache_read": 0, "cache_write": 0, "batch": 1}}', /entry "m" has "batch"/],
    ['{"m": [1, 2, 3, 4]}', /entry "m" must be an object/],
    ['{"m": {"input": 1e9, "output": 2, "cache_read": 0, "cache_write": 0}}', /entry "m": input /],
    ['[]', /must be a JSON object/],
    ['{"m": ', /not JSON/],
  ] as const) {
    const err: string[] = []
    const code = await run(['migrate'], { STUDIO_PRICES: file(text) }, { out: () => {}, err: (l) => err.push(l) })
    t.equal(code, 2, text)
    t.equal(err.length, 1, text)
    t.match(err[0], /^studio: invalid configuration: STUDIO_PRICES: /)
    t.match(err[0], says)
  }
  const err: string[] = []
  const missing = join(dir, 'missing.json')
  t.equal(await run(['migrate'], { STUDIO_PRICES: missing }, { out: () => {}, err: (l) => err.push(l) }), 2)
  t.match(err[0], /STUDIO_PRICES: cannot read the file: ENOENT/)
})

t.test('docs/spend.md shows the date the shipped prices were taken', async (t) => {
  const { readFileSync } = await import('node:fs')
  t.match(readFileSync(new URL('../../docs/spend.md', import.meta.url), 'utf8'), `**${PRICES_TAKEN}**`)
})
