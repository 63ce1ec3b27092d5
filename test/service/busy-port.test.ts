import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { FROM_SOURCE } from '../support/processes.js'
import { rootPath } from '../support/paths.js'
import { refusedPort } from '../support/ports.js'

// `studio serve` on a port another process holds: found before the database is touched (an unreachable PostgreSQL,
// or an embedded one never created), one line suggesting PORT, exit code 2.

const holder = createServer().listen(0, '127.0.0.1')
await new Promise((ok) => holder.once('listening', ok))
t.teardown(() => holder.close())
const busy = String((holder.address() as { port: number }).port)

function serve(env: Record<string, string>) {
  const child = spawn(process.execPath, [...FROM_SOURCE, 'serve'], {
    cwd: rootPath(''),
    env: { PATH: process.env.PATH, PORT: busy, HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')))
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  return new Promise<{ code: number | null; err: string[] }>((done) =>
    child.once('exit', (code) => done({ code, err: err.split('\n').filter(Boolean) }))
  )
}

const refusal = new RegExp(`^studio: port ${busy} on 127\\.0\\.0\\.1 is already in use .*: set PORT to a free port`)

t.test('refused before the database is touched: PostgreSQL never reached, no embedded one made', async (t) => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'studio-busy-')), 'data')
  const [postgres, embedded] = await Promise.all([
    serve({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await refusedPort()}/none` }),
    serve({ STUDIO_DATA_DIR: dataDir }),
  ])
  for (const r of [postgres, embedded]) {
    t.equal(r.code, 2)
    t.equal(r.err.length, 1, `one line: ${r.err.join('\n')}`)
    t.match(r.err[0], refusal)
  }
  t.notOk(existsSync(dataDir), 'no embedded database made')
})
