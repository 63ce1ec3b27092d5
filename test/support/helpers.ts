import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import postgres from 'postgres'
import { createKey, type CreateKeyInput } from '../../src/accounts/accounts.js'
import { parseConfig, type Config } from '../../src/ops/config.js'
import { openDatabase, type Database } from '../../src/storage/db.js'
import { createLogger, type Logger } from '../../src/ops/log.js'
import { migrate } from '../../src/storage/migrate.js'
import { startService, type Service, type ServiceOptions } from '../../src/service.js'
import { recordFetches } from './responses.js'

const execFileP = promisify(execFile)

// Every /api/v1 answer a test fetches is recorded and checked against the served OpenAPI document at the end of the
// run (responses-check.ts).
recordFetches()

export interface Teardown {
  teardown(fn: () => unknown): void
}

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
  return Object.assign(createLogger(level, sink, sink), { lines })
}

// Its own database per test file: a fresh PostgreSQL database when DATABASE_URL is set, else a fresh embedded one.
export async function testDatabase(t: Teardown): Promise<Record<string, string>> {
  const admin = process.env.DATABASE_URL
  if (!admin) {
    const dir = mkdtempSync(join(tmpdir(), 'studio-test-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    return { STUDIO_DATA_DIR: dir }
  }
  const name = `studio_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const sql = postgres(admin, { max: 1, onnotice: () => {} })
  await sql.unsafe(`create database ${name}`)
  await sql.end()
  t.teardown(async () => {
    const sql = postgres(admin, { max: 1, onnotice: () => {} })
    await sql.unsafe(`drop database if exists ${name} with (force)`)
    await sql.end()
  })
  const url = new URL(admin)
  url.pathname = `/${name}`
  return { DATABASE_URL: url.toString() }
}

export interface TestServer extends Service {
  log: ReturnType<typeof captureLogger>
  config: Config
  key(input?: CreateKeyInput): Promise<string>
  fetch(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>
}

export async function startTestServer(
  t: Teardown,
  env: Record<string, string> = {},
  opts: Partial<ServiceOptions> & { dbEnv?: Record<string, string> } = {}
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
  }
}

export async function issueKey(sql: Database['sql'], input: CreateKeyInput) {
  const { key } = await createKey(sql, input)
  issuedKeys.push(key)
  return key
}

export async function openTestDatabase(t: Teardown, dbEnv: Record<string, string>): Promise<Database> {
  const db = await openDatabase(parseConfig(dbEnv))
  await migrate(db.sql)
  t.teardown(() => db.close())
  return db
}

let built: Promise<string> | undefined
const spawned = new Set<ReturnType<typeof spawn>>()
const killAll = () => spawned.forEach((c) => c.exitCode === null && c.kill('SIGKILL'))
process.once('exit', killAll)
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    killAll()
    process.exit(1)
  })

// Builds the bundle once per test process into a temporary directory and returns the path of studio.mjs.
export function buildBundle(t: Teardown): Promise<string> {
  return (built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'studio-bundle-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const out = join(dir, 'dist')
    await execFileP(process.execPath, ['build.mjs'], { env: { ...process.env, STUDIO_BUILD_OUTDIR: out } })
    return join(out, 'studio.mjs')
  })())
}

export interface Spawned {
  url: string
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

// Runs `studio serve` from the bundle as a separate process; resolves once it listens.
export async function spawnServer(t: Teardown, env: Record<string, string>, cwd = tmpdir()): Promise<Spawned> {
  const bin = await buildBundle(t)
  const child = spawn(process.execPath, [bin, 'serve'], {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  spawned.add(child)
  let output = ''
  child.stderr.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((ok) => child.once('exit', ok))
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null) child.kill(signal)
    return exited
  }
  // Before waiting: a server that never says it listens is killed too, not left running after the test.
  t.teardown(() => stop('SIGKILL'))
  const url = await new Promise<string>((ok, fail) => {
    child.stdout.on('data', (d) => {
      output += d
      const m = /"url":"(http:[^"]+)"/.exec(output)
      if (m) ok(m[1])
    })
    void exited.then((code) => fail(new Error(`exited ${code}: ${output}`)))
    setTimeout(() => fail(new Error(`not listening after 30 s: ${output}`)), 30_000).unref()
  })
  return { url, stop, output: () => output }
}
