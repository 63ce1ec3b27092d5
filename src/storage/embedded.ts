import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { join, resolve } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { listen } from '../ops/listen.js'
import { dumpCopy, serveBackups } from './embedded-backup.js'

// The embedded PostgreSQL: one process owns the PGlite data directory and serves it on a unix socket in
// that directory; every other process (the CLI while `serve` runs, a second server) connects through it.

export const socketPath = (dataDir: string) => join(resolve(dataDir), '.s.PGSQL.5432')

export interface EmbeddedServer {
  socket: string
  // A consistent backup in plain SQL (embedded-backup.ts), taken between two clients' exchanges.
  backup(): Promise<string>
  close(): Promise<void>
}

export async function socketAnswers(path: string): Promise<boolean> {
  return new Promise((done) => {
    const s = connect(path)
    s.once('connect', () => {
      s.destroy()
      done(true)
    })
    s.once('error', () => done(false))
  })
}

function alive(pid: number) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function takeLock(lockPath: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return true
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const pid = Number(readFileSync(lockPath, 'utf8'))
      if (pid && pid !== process.pid && alive(pid)) return false
      rmSync(lockPath, { force: true })
    }
  }
  return false
}

// Start the embedded database unless another process already serves it. Returns null in that case:
// connect to socketPath(dataDir) instead.
export async function startEmbedded(dataDir: string): Promise<EmbeddedServer | null> {
  const dir = resolve(dataDir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const socket = socketPath(dir)
  const lock = join(dir, 'studio.lock')
  if (!takeLock(lock)) return null
  rmSync(socket, { force: true })
  const { PGlite } = await import('@electric-sql/pglite')
  const { PGLiteSocketHandler } = await import('@electric-sql/pglite-socket')
  const db = await PGlite.create({ dataDir: join(dir, 'pgdata') })
  const queue = new ExclusiveQueue(db)
  const handlers = new Set<InstanceType<typeof PGLiteSocketHandler>>()
  const server: Server = createServer((conn) => {
    const handler = new PGLiteSocketHandler({ queryQueue: queue as never, closeOnDetach: true })
    handlers.add(handler)
    conn.once('close', () => handlers.delete(handler))
    handler.attach(conn).catch(() => conn.destroy())
  })
  await listen(server, { path: socket })
  const backup = () => dumpCopy(db, (fn) => queue.alone(fn))
  const backups = await serveBackups(dir, backup)
  return {
    socket,
    backup,
    async close() {
      await new Promise((ok) => {
        server.close(ok)
        for (const h of handlers) void h.detach(true)
      })
      await backups.close()
      await db.close()
      rmSync(lock, { force: true })
    },
  }
}

interface Item {
  handlerId: number
  message: Uint8Array
  onData: (data: Uint8Array) => void
  resolve: (bytes: number) => void
  reject: (err: unknown) => void
  // Work of this process's own that needs the backend alone (no client inside an exchange): `alone`.
  task?: () => Promise<unknown>
}

const ALONE = -1

const SYNC = 0x53
const QUERY = 0x51
const TERMINATE = 0x58

// PGlite is one backend. Many client connections share it, so a connection keeps the backend from its first
// message until its exchange ends (Sync or a simple Query outside a transaction): extended-protocol messages
// of two clients never interleave, and a transaction is never entered by another client's statements.
class ExclusiveQueue {
  private queue: Item[] = []
  private busy = false
  private owner: number | null = null

  constructor(private db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject })
      void this.pump()
    })
  }

  // Runs fn once no client is inside an exchange or a transaction, while every client's next message waits.
  alone<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      const task = () => fn().then(resolve, reject)
      this.queue.push({
        handlerId: ALONE,
        message: new Uint8Array(),
        onData: () => {},
        resolve: () => {},
        reject,
        task,
      })
      void this.pump()
    })
  }

  getQueueLength() {
    return this.queue.length
  }

  clearQueueForHandler(handlerId: number) {
    this.queue = this.queue.filter((i) => {
      if (i.handlerId !== handlerId) return true
      i.reject(new Error('client disconnected'))
      return false
    })
  }

  async clearTransactionIfNeeded(handlerId: number) {
    if (this.owner !== handlerId) return
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK').catch(() => {})
    this.owner = null
    void this.pump()
  }

  private async pump() {
    if (this.busy) return
    this.busy = true
    try {
      while (this.queue.length > 0) {
        const at = this.owner === null ? 0 : this.queue.findIndex((i) => i.handlerId === this.owner)
        if (at === -1) break
        const item = this.queue.splice(at, 1)[0]
        if (item.task) {
          await item.task()
          continue
        }
        this.owner = item.handlerId
        let bytes = 0
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (d) => {
                bytes += d.length
                item.onData(d)
              },
            })
          )
        } catch (e) {
          this.owner = null
          item.reject(e)
          continue
        }
        const type = item.message[0]
        if ((type === SYNC || type === QUERY || type === TERMINATE || type === 0) && !this.db.isInTransaction())
          this.owner = null
        item.resolve(bytes)
      }
    } finally {
      this.busy = false
    }
  }
}
