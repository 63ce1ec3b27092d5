import { rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { join, resolve } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { listen } from '../ops/listen.js'

// Backups of the embedded database, in PostgreSQL's plain SQL format, by the WebAssembly pg_dump of
// @electric-sql/pglite-tools (loaded only when a backup is made, so that starting loads nothing of it).
// pg_dump runs on a PGlite instance in this process, and changes that instance's one session (settings,
// `DEALLOCATE ALL`): never the served one, whose session every client shares. A copy of the data directory is
// taken instead, in an instant when no client is inside an exchange or a transaction (the socket's queue holds
// their next messages meanwhile), and pg_dump reads that copy while the server goes on.

// Plain SQL that `studio restore` (or psql) can load: INSERTs rather than COPY, no owners or grants.
export const DUMP_ARGS = ['--no-owner', '--no-privileges', '--inserts']

export async function dumpCopy(db: PGlite, alone: <T>(fn: () => Promise<T>) => Promise<T>): Promise<string> {
  const image = await alone(() => db.dumpDataDir('none'))
  const [{ PGlite }, { pgDump }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-tools/pg_dump'),
  ])
  const copy = await PGlite.create({ loadDataDir: image })
  try {
    return await (await pgDump({ pg: copy, args: DUMP_ARGS })).text()
  } finally {
    await copy.close()
  }
}

// The socket through which the process that owns the data directory makes a backup for another one (the CLI's
// `studio backup` while the server runs): a connection gets `ok` and the backup, or `error <message>`, then the end.
const backupSocketPath = (dataDir: string) => join(resolve(dataDir), '.s.studio.backup')

export async function serveBackups(dataDir: string, backup: () => Promise<string>) {
  const path = backupSocketPath(dataDir)
  rmSync(path, { force: true })
  const server = createServer((conn) => {
    conn.on('error', () => {})
    backup().then(
      (text) => conn.end(`ok\n${text}`),
      (e) => conn.end(`error ${String((e as Error).message).replaceAll('\n', ' ')}\n`)
    )
  })
  await listen(server, { path })
  return { close: () => new Promise<void>((ok) => server.close(() => ok())) }
}

// A backup made by the process serving `dataDir`.
export function requestBackup(dataDir: string): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = []
    const conn = connect(backupSocketPath(dataDir))
    conn.on('data', (d: Buffer) => chunks.push(d))
    conn.once('error', (e) => fail(new Error(`the running server did not make the backup: ${e.message}`)))
    conn.once('end', () => {
      const answer = Buffer.concat(chunks).toString('utf8')
      if (answer.startsWith('ok\n')) return done(answer.slice(3))
      fail(new Error(`the running server could not make the backup: ${answer.slice(6).trim() || 'no answer'}`))
    })
  })
}
