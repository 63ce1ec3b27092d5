import { rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { join, resolve } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { listen } from '../ops/listen.js'

// Backups of the embedded database, in PostgreSQL's plain SQL format, by the WebAssembly pg_dump of
// @electric-sql/pglite-tools (loaded only when a backup is made, so that starting loads nothing of it).
// pg_dump runs on a PGlite instance in its own thread, and changes that instance's one session (settings,
// `DEALLOCATE ALL`): never the served one, whose session every client shares. A copy of the data directory is
// taken instead, in an instant when no client is inside an exchange or a transaction (the socket's queue holds
// their next messages meanwhile), and pg_dump reads that copy in a worker thread (dump-worker.ts), whose run of a
// few seconds, synchronous in WebAssembly, would otherwise hold this thread's requests.

// Plain SQL that `studio restore` (or psql) can load: INSERTs rather than COPY, no owners or grants.
export const DUMP_ARGS = ['--no-owner', '--no-privileges', '--inserts']

// The plain SQL of a data directory's image (in the worker thread).
export async function dumpImage(image: Blob): Promise<string> {
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

// The worker is dump-worker.ts beside this file in the sources (the tests), dump-worker.mjs in the bundle.
const workerUrl = () => new URL(`./dump-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.mjs'}`, import.meta.url)

export async function dumpCopy(db: PGlite, alone: <T>(fn: () => Promise<T>) => Promise<T>): Promise<string> {
  const image = await (await alone(() => db.dumpDataDir('none'))).arrayBuffer()
  const { Worker } = await import('node:worker_threads')
  return new Promise((done, fail) => {
    const worker = new Worker(workerUrl(), { workerData: image, transferList: [image] })
    worker.once('message', (m: { text?: string; error?: string }) =>
      m.error === undefined ? done(m.text!) : fail(new Error(m.error))
    )
    worker.once('error', fail)
    worker.once('exit', (code) => fail(new Error(`the backup's worker thread stopped (exit code ${code})`)))
  })
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
