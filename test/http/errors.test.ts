import t from 'tap'
import { UpstreamFailure } from '../../src/completions/call.js'
import { ApiError } from '../../src/http/errors.js'

// An error that is an outcome (a 401, a 429, an upstream's failure) is made without a stack trace; every other error
// keeps its own, since an unhandled one is logged with it.
t.test('an ApiError or an UpstreamFailure has no stack frames; the errors made after it do', async (t) => {
  const refused = new ApiError('rate_limited', 'Slow down')
  t.equal(refused.status, 429)
  t.equal(refused.message, 'Slow down')
  t.ok(refused instanceof Error)
  t.notMatch(refused.stack ?? '', /\n\s+at /, 'no frames captured')
  const failed = new UpstreamFailure(new ApiError('upstream_error', 'Overloaded'), 'upstream_unavailable', 1)
  t.equal(failed.message, 'Overloaded')
  t.notMatch(failed.stack ?? '', /\n\s+at /, 'no frames captured')
  t.match(new Error('a fault').stack, /\n\s+at /, 'a plain error still has its frames')
})

t.test("the process's own stack trace limit is kept", async (t) => {
  const before = Error.stackTraceLimit
  t.teardown(() => {
    Error.stackTraceLimit = before
  })
  Error.stackTraceLimit = 3
  new ApiError('unauthorized', 'No key')
  t.equal(Error.stackTraceLimit, 3)
})
