import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { Config } from '../ops/config.js'
import { Refused } from '../ops/refused.js'
import { socketAnswers, socketPath, startEmbedded } from './embedded.js'
import { DUMP_ARGS, requestBackup } from './embedded-backup.js'

// `studio backup FILE`: a consistent backup in PostgreSQL's plain SQL format, written to a temporary file beside FILE
// and renamed to it once whole, so FILE is never half a backup.

const PG_DUMP_MISSING =
  'pg_dump is not installed: install PostgreSQL client tools of the same or a newer major version than the ' +
  'server (Debian, Ubuntu: apt-get install postgresql-client; macOS: brew install libpq), then run this again'

// Writes `file` whole or not at all: `write` fills the temporary path given, made beforehand readable by its owner
// only (a backup holds key hashes and webhook secrets; pg_dump would create it world-readable).
export async function writeAtomically(file: string, write: (temporary: string) => Promise<void>) {
  const temporary = join(dirname(resolve(file)), `.${Date.now()}-${process.pid}.backup.tmp`)
  try {
    writeFileSync(temporary, '', { mode: 0o600, flag: 'wx' })
    await write(temporary)
    renameSync(temporary, file)
  } finally {
    rmSync(temporary, { force: true })
  }
}

// The embedded database's backup: made by the process that serves it, or, when none does, by this one over the data
// directory (taking its lock meanwhile, so a server starting then waits for its socket and connects through it).
async function embeddedBackup(dataDir: string): Promise<string> {
  if (await socketAnswers(socketPath(dataDir))) return requestBackup(dataDir)
  if (!existsSync(join(resolve(dataDir), 'pgdata')))
    throw new Refused(`no embedded database in ${resolve(dataDir)} (STUDIO_DATA_DIR)`)
  const own = await startEmbedded(dataDir)
  if (!own) return requestBackup(dataDir)
  try {
    return await own.backup()
  } finally {
    await own.close()
  }
}

// PostgreSQL's own pg_dump, run over DATABASE_URL: the URL on its command line without the password, which goes
// through the environment (PGPASSWORD), so that `ps` never shows it. node:child_process loads here, at the first
// backup: not at every start of the service (it brings eight more of node's modules, 3 ms of a start).
async function pgDump(databaseUrl: string, file: string): Promise<void> {
  const { execFile } = await import('node:child_process')
  const url = new URL(databaseUrl)
  const env = { ...process.env, ...(url.password && { PGPASSWORD: decodeURIComponent(url.password) }) }
  url.password = ''
  return new Promise((done, fail) => {
    const args = [...DUMP_ARGS, '--file', file, '--dbname', url.toString()]
    execFile('pg_dump', args, { env, maxBuffer: 16 << 20 }, (e, _out, err) => {
      if (!e) return done()
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return fail(new Refused(PG_DUMP_MISSING))
      fail(new Error(`pg_dump failed: ${String(err).trim().split('\n').at(-1) || e.message}`))
    })
  })
}

export async function backup(config: Pick<Config, 'DATABASE_URL' | 'STUDIO_DATA_DIR'>, file: string) {
  const url = config.DATABASE_URL
  await writeAtomically(file, async (temporary) => {
    if (url) await pgDump(url, temporary)
    else writeFileSync(temporary, await embeddedBackup(config.STUDIO_DATA_DIR))
  })
}
