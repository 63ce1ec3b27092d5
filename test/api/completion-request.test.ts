import fc from 'fast-check'
import t from 'tap'
import * as v from 'valibot'
import { acceptCompletionRequest } from '../../src/api/completion-request.js'
import { CompletionRequest } from '../../src/api/schemas.js'

// The hand-written check of a completion request against the schema it stands in for: whatever it accepts, the schema
// accepts, with the same output (fields, defaults, key order); what the schema refuses, it leaves to the schema.

const same = (input: unknown) => {
  const fast = acceptCompletionRequest(input)
  const parsed = v.safeParse(CompletionRequest, input)
  if (fast === undefined) return true
  return parsed.success && JSON.stringify(fast) === JSON.stringify(parsed.output) && fast !== input
}

const text = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('', ' ', 'a\u0000b', '\ud800', 'x'.repeat(1_048_577), 'Say hello')
)
const value = fc.oneof(
  text,
  fc.constantFrom(0, -0, 1, 0.5, 1.5, 4096, 4097, -1, 64, null, true, [], {}, 'user', 'primary', 'fast'),
  fc.constant(Number.POSITIVE_INFINITY)
)
const message = fc.dictionary(
  fc.constantFrom('role', 'content', 'other'),
  fc.oneof(value, fc.constantFrom('user', 'assistant'))
)
const request = fc.dictionary(
  fc.constantFrom('messages', 'model', 'system', 'max_tokens', 'temperature', 'extra', '__proto__'),
  fc.oneof(value, fc.array(fc.oneof(message, value), { maxLength: 3 }))
)

t.test('the fast check accepts only what the schema accepts, with the schema output', async (t) => {
  fc.assert(fc.property(request, same), { numRuns: 3000 })
  fc.assert(fc.property(fc.jsonValue(), same), { numRuns: 1000 })
  t.pass()
})

t.test('the common requests are taken by the fast check', async (t) => {
  const messages = [{ content: 'Say hello', role: 'user' }]
  for (const input of [
    { messages },
    { messages, max_tokens: 64 },
    { temperature: 0.2, system: '', model: 'fast', messages, max_tokens: 1 },
    { messages: [...messages, { role: 'assistant', content: 'Hi' }], system: 'Be brief', temperature: 0 },
  ]) {
    const parsed = JSON.parse(JSON.stringify(input))
    t.ok(acceptCompletionRequest(parsed), JSON.stringify(input))
    t.equal(JSON.stringify(acceptCompletionRequest(parsed)), JSON.stringify(v.parse(CompletionRequest, parsed)))
  }
  const refused = [{}, { messages: [] }, { messages, model: 'big' }, { messages, max_tokens: 1.5 }, { messages, x: 1 }]
  for (const input of refused) t.equal(acceptCompletionRequest(input), undefined, JSON.stringify(input))
})
