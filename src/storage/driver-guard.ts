import type { Logger } from '../ops/log.js'
import { isDatabaseDown } from './database-down.js'

// Two bugs of postgres.js (3.4) that would end the process while PostgreSQL goes away, although every request that
// needed the database already has its own error. test/storage/driver-bugs.test.ts reproduces both in a child process:
// when one of its cases fails, the upstream has fixed that bug and its half of this guard goes.
//
// - https://github.com/porsager/postgres/issues/1192 (also #279, #1223): each new connection fetches the array types
//   and holds no handler on that query, so a connection lost right then rejects a promise nobody awaits. Such a
//   rejection, when it says the database is down, is logged and dropped; any other still ends the process.
// - https://github.com/porsager/postgres/issues/1154 (also #1066, #1208): a connection closed in the middle of a
//   transaction gets its ROLLBACK written from a setImmediate (nextWrite) on a socket that is null: a TypeError no
//   caller can catch. That exception alone is logged and dropped.
let driverLog: Logger | undefined
const WRITE_AFTER_CLOSE = "Cannot read properties of null (reading 'write')"
const isWriteAfterClose = (e: unknown) =>
  e instanceof TypeError && e.message === WRITE_AFTER_CLOSE && /processImmediate/.test(e.stack ?? '')

export function guardDriverRejections(log: Logger) {
  if (!driverLog) {
    process.on('unhandledRejection', (e) => {
      if (!isDatabaseDown(e)) throw e
      driverLog?.warn('database unavailable (a driver promise nobody awaited)', { err: String((e as Error).message) })
    })
    process.on('uncaughtException', (e) => {
      if (isWriteAfterClose(e)) return driverLog?.warn('database unavailable (a write after its connection closed)')
      // Anything else ends the process as it would have (unless another listener, a test runner, takes it).
      if (process.listenerCount('uncaughtException') > 1) return
      console.error(e)
      process.exit(1)
    })
  }
  driverLog = log
}
