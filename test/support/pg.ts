import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './ports.js'
import type { Teardown } from './teardown.js'

// A PostgreSQL server of the test's own, in a temporary directory on a free port, for the tests that stop it: never
// the machine's shared one. As root, its binaries run as the postgres user (initdb refuses root).

const exec = promisify(execFile)
const BIN = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((d) =>
  existsSync(join(d, 'pg_ctl'))
)
export const havePostgres = BIN !== undefined

export interface PrivatePostgres {
  url: string
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  start(): Promise<void>
  // Stops (SIGSTOP) or resumes (SIGCONT) the server's processes: its connections stay open and answer nothing. With
  // `backends` only the postmaster's children stop (new connections are still accepted, then hang in their startup).
  freeze(which?: 'all' | 'backends'): Promise<void>
  thaw(): Promise<void>
}

export async function privatePostgres(t: Teardown): Promise<PrivatePostgres> {
  if (!BIN) throw new Error('no PostgreSQL binaries')
  const root = process.getuid?.() === 0
  const run = (cmd: string, args: string[]) =>
    root ? exec('runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args]) : exec(join(BIN, cmd), args)
  const dir = mkdtempSync(join(tmpdir(), 'studio-pg-'))
  if (root)
    chownSync(
      dir,
      Number((await exec('id', ['-u', 'postgres'])).stdout),
      Number((await exec('id', ['-g', 'postgres'])).stdout)
    )
  const data = join(dir, 'data')
  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`
  const start = async () =>
    void (await run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']))
  const stop = async (mode: 'fast' | 'immediate' = 'fast') =>
    void (await run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']))
  const signal = async (sig: 'STOP' | 'CONT', which: 'all' | 'backends' = 'all') => {
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
    const children = (await exec('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }))).stdout
      .split('\n')
      .filter(Boolean)
      .map(Number)
    for (const pid of which === 'all' ? [postmaster, ...children] : children) process.kill(pid, `SIG${sig}`)
  }
  await start()
  t.teardown(async () => {
    await signal('CONT').catch(() => {})
    await stop('immediate').catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    freeze: (which) => signal('STOP', which),
    thaw: () => signal('CONT'),
  }
}
