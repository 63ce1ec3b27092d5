import t from 'tap'
import { CallAbort } from '../../src/completions/abort.js'

// The call's one abort: who aborted is noted apart (both may be), listeners run once, and the retry sleep ends at the
// first abort.

t.test('cancel and expire are noted apart; listeners run once; a removed one never', async (t) => {
  const a = new CallAbort()
  let runs = 0
  const gone = () => runs++
  a.on('abort', () => runs++).on('abort', gone)
  a.removeListener('abort', gone)
  a.expire()
  a.cancel()
  t.same([a.aborted, a.byDeadline, a.byCaller, runs], [true, true, true, 1])
})

t.test('the sleep resolves, or rejects at the abort, or at once when aborted already', async (t) => {
  const a = new CallAbort()
  await a.sleep(1)
  const sleeping = a.sleep(60_000)
  a.cancel()
  await t.rejects(sleeping)
  await t.rejects(a.sleep(1))
  t.ok(a.byCaller)
})
