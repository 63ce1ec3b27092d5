import type { Config } from '../ops/config.js'
import { createLogger } from '../ops/log.js'
import { startService } from '../service.js'

// `studio serve`: runs the service until SIGTERM or SIGINT, then closes it (drain, flush, close the pool).
export async function serve(config: Config): Promise<number> {
  const log = createLogger(config.LOG_LEVEL)
  const service = await startService(config, { log })
  return new Promise((done) => {
    const stop = (signal: string) => {
      log.info('shutting down', { signal })
      service.close().then(
        () => done(0),
        (e) => (log.error('shutdown failed', {}, e), done(1))
      )
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
}
