import { createKey, type CreateKeyInput } from '../../src/accounts/key-lifecycle.js'
import { type Config, parseConfig } from '../../src/ops/config.js'
import { createLogger, type Logger } from '../../src/ops/log.js'
import { type Service, type ServiceOptions, startService } from '../../src/service.js'
import type { Database } from '../../src/storage/db.js'
import { type DbEnv, testDatabase } from './database.js'
import { recordFetches } from './responses.js'
import type { Teardown } from './teardown.js'

// Every /api/v1 answer a test fetches is recorded and checked against the served OpenAPI document at the end of the
// run (responses-check.ts).
recordFetches()

// Every key any test issued, and every line any server logged, so a test can prove no key reached a log.
export const issuedKeys: string[] = []
export const logLines: string[] = []

export function captureLogger(level: Config['LOG_LEVEL'] = 'debug'): Logger & { lines: string[] } {
  const lines: string[] = []
  const sink = {
    write: (l: string) => {
      lines.push(l)
      logLines.push(l)
    },
  }
  return Object.assign(createLogger(level, { out: sink, err: sink }), { lines })
}

export interface TestServer extends Service {
  log: ReturnType<typeof captureLogger>
  config: Config
  // Its database's settings: another server, a CLI run or a second connection reaches the same database with them.
  dbEnv: DbEnv
  key(input?: CreateKeyInput): Promise<string>
  fetch(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>
  // The value of a metric series as rendered: `name`, or `name{label="value"}` (NaN when it is not there).
  metric(name: string): number
}

// The service in this process on a free port, over its own database unless `opts.dbEnv` names one.
export async function startTestServer(
  t: Teardown,
  env: Record<string, string> = {},
  opts: Partial<ServiceOptions> & { dbEnv?: DbEnv } = {}
): Promise<TestServer> {
  const dbEnv = opts.dbEnv ?? (await testDatabase(t))
  const config = parseConfig({ PORT: '0', LOG_LEVEL: 'debug', STUDIO_AUTH_FAIL_LIMIT: '100000', ...dbEnv, ...env })
  const log = captureLogger()
  const service = await startService(config, { log, ...opts })
  t.teardown(() => service.close())
  return {
    ...service,
    log,
    config,
    dbEnv,
    key: (input = { email: `u${Math.random().toString(36).slice(2)}@example.com` }) => issueKey(service.db.sql, input),
    fetch(path, init = {}) {
      const headers = new Headers(init.headers)
      if (init.key) headers.set('authorization', `Bearer ${init.key}`)
      let body = init.body
      if (init.json !== undefined) {
        body = JSON.stringify(init.json)
        if (!headers.has('content-type')) headers.set('content-type', 'application/json')
      }
      return fetch(service.url + path, { ...init, headers, body })
    },
    metric: (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(service.metrics.render())?.[1]),
  }
}

export async function issueKey(sql: Database['sql'], input: CreateKeyInput) {
  const { key } = await createKey(sql, input)
  issuedKeys.push(key)
  return key
}
