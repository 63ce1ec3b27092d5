import t from 'tap'
import { UpstreamFailure } from '../../src/completions/call.js'
import { ApiError } from '../../src/http/errors.js'

// An error that is an outcome (a 401, a 429, an upstream's failure) is made without a stack trace; every other error
// keeps its own, since an unhandled one is logged with it.
t.test('an ApiError or an UpstreamFailure has no stack frames; the errors made after it do', async (t) => {
  const refused = new ApiError({ code: 'rate_limited', message: 'Slow down' })
  t.equal(refused.status, 429)
  t.equal(refused.message, 'Slow down')
  t.ok(refused instanceof Error)
  t.equal(refused.name, 'Error')
  t.notMatch(refused.stack ?? '', /\n\s+at /, 'no frames captured')
  const failed = new UpstreamFailure(new ApiError({ code: 'upstream_error', message: 'Overloaded' }), {
    outcome: 'upstream_unavailable',
    attempts: 1,
  })
  t.equal(failed.message, 'Overloaded')
  t.notMatch(failed.stack ?? '', /\n\s+at /, 'no frames captured')
  t.match(new Error('a fault').stack, /\n\s+at /, 'a plain error still has its frames')
})

t.test('making one changes nothing process-wide: the stack trace limit is neither read nor written', async (t) => {
  const own = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!
  t.teardown(() => {
    Object.defineProperty(Error, 'stackTraceLimit', own)
  })
  let touched = 0
  Object.defineProperty(Error, 'stackTraceLimit', {
    configurable: true,
    get: () => {
      touched++
      return own.value
    },
    set: () => {
      touched++
    },
  })
  const refused = new ApiError({ code: 'unauthorized', message: 'No key' })
  new UpstreamFailure(refused, { outcome: 'upstream_auth', attempts: 1 })
  t.equal(touched, 0)
  t.equal(String(refused), 'Error: No key', "Error's toString")
  t.equal(refused.stack, 'Error: No key', 'the first line alone')
})
