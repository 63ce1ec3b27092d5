import type { Config } from '../ops/config.js'
import { checkPortFree } from '../ops/listen.js'
import { createLogger, formatFor, type Logger } from '../ops/log.js'
import { startService } from '../service.js'
import type { Io } from './command.js'

// The last line of a stop, once everything is closed.
function stopped(log: Logger, code: number): number {
  log.info('stopped', { code })
  return code
}

// `studio serve`: runs the service until SIGTERM or SIGINT, then closes it (drain, flush, close the pool). With
// STUDIO_WORKERS > 1 this process is the cluster primary and each worker it forks runs this same function.
export async function serve(config: Config, io: Io): Promise<number> {
  const log = createLogger(config.LOG_LEVEL, { format: formatFor(config.LOG_FORMAT) })
  if (config.STUDIO_WORKERS > 1) {
    // node:cluster (and the child_process it brings) is loaded only for a multi-worker server: not at every start.
    const { isPrimary, runPrimary, workersProblem } = await import('./workers.js')
    const problem = workersProblem(config)
    if (problem) {
      io.err(`studio: ${problem}`)
      return 2
    }
    // PORT is tried (a taken one refused before the database is touched) by the process that binds it: the primary,
    // never a worker, whose try would listen on the shared port and close it at once (cli/workers.ts).
    if (isPrimary(config)) {
      await checkPortFree(config.PORT, config.HOST)
      return stopped(log, await runPrimary(config.STUDIO_WORKERS, log))
    }
  } else await checkPortFree(config.PORT, config.HOST)
  // The signals are taken before the service starts: a SIGTERM during start (migrations, Redis) stops it as soon
  // as it stands, instead of killing it outright (which a cluster primary would count as a failure).
  let early: string | undefined
  let onSignal = (signal: string) => void (early ??= signal)
  // `on`, not `once`: a worker may get SIGTERM twice (from its primary and from systemd's whole control group).
  process.on('SIGTERM', (s) => onSignal(s))
  process.once('SIGINT', (s) => onSignal(s))
  const service = await startService(config, { log })
  const code = await new Promise<number>((done) => {
    let stopping = false
    onSignal = (signal: string) => {
      if (stopping) return
      stopping = true
      log.info('shutting down', { signal })
      service.close().then(
        () => done(0),
        (e) => {
          log.error('shutdown failed', {}, e)
          done(1)
        }
      )
    }
    if (early) onSignal(early)
  })
  return stopped(log, code)
}
