import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Config } from '../ops/config.js'
import type { Logger } from '../ops/log.js'
import type { Metrics } from '../ops/service-metrics.js'
import { writeAtomically } from './backup.js'
import type { Database } from './db.js'

// The embedded database's scheduled backups (STUDIO_BACKUP_DIR): every STUDIO_BACKUP_INTERVAL the process that owns
// it writes one, named for its time (studio-backup-20261125T090000000Z.sql), whole or not at all (temporary file,
// then rename), and deletes all but the newest STUDIO_BACKUP_KEEP. The next one is due an interval after the newest
// in the directory, so a restart neither skips one nor makes one early.

export interface BackupScheduleOptions {
  // Tests drive time: the clock the schedule reads, and how often it looks whether a backup is due.
  clock?: () => number
  checkMs?: number
}

export interface BackupSchedule {
  // For /readyz: the time of the newest backup in the directory (null: none yet).
  details(): { last_backup: string | null }
  close(): Promise<void>
}

const NAME = /^studio-backup-(\d{8}T\d{9}Z)\.sql$/
const nameOf = (ms: number) => `studio-backup-${new Date(ms).toISOString().replace(/[-:.]/g, '')}.sql`
const timeOf = (name: string) => {
  const s = NAME.exec(name)![1]
  const iso = `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 11)}:${s.slice(11, 13)}:${s.slice(13, 15)}.${s.slice(15)}`
  return Date.parse(iso)
}
const RETRY_MS = 15 * 60_000

export function startBackups(
  config: Pick<Config, 'STUDIO_BACKUP_DIR' | 'STUDIO_BACKUP_INTERVAL' | 'STUDIO_BACKUP_KEEP'>,
  db: Pick<Database, 'backup'>,
  deps: { log: Logger; metrics: Metrics } & BackupScheduleOptions
): BackupSchedule | null {
  const { log, metrics, clock = Date.now } = deps
  const backup = db.backup
  if (config.STUDIO_BACKUP_DIR === undefined) return null
  if (!backup) {
    log.warn('scheduled backups are made by the process that owns the embedded database, not this one')
    return null
  }
  const dir = resolve(config.STUDIO_BACKUP_DIR)
  const intervalMs = config.STUDIO_BACKUP_INTERVAL * 1000
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const names = () =>
    readdirSync(dir)
      .filter((n) => NAME.test(n))
      .sort()
  for (const n of readdirSync(dir)) if (n.endsWith('.backup.tmp')) rmSync(join(dir, n), { force: true })
  const newest = names().at(-1)
  let last = newest === undefined ? null : timeOf(newest)
  let failedAt = Number.NEGATIVE_INFINITY
  let running: Promise<void> | null = null

  async function make(at: number) {
    const file = join(dir, nameOf(at))
    try {
      const text = await backup!()
      await writeAtomically(file, async (temporary) => writeFileSync(temporary, text))
      last = at
      const old = names().slice(0, -config.STUDIO_BACKUP_KEEP)
      for (const n of old) rmSync(join(dir, n), { force: true })
      log.info('backup written', { file, bytes: Buffer.byteLength(text), deleted: old.length })
    } catch (e) {
      failedAt = clock()
      log.error('backup failed', { file, err: String((e as Error).message) })
    }
  }
  const check = () => {
    const now = clock()
    if (running || (last !== null && now < last + intervalMs) || now < failedAt + Math.min(intervalMs, RETRY_MS)) return
    running = make(now).finally(() => {
      running = null
    })
  }
  const timer = setInterval(check, deps.checkMs ?? Math.min(intervalMs, 60_000)).unref()
  metrics.gauge(
    'studio_backup_last_success_timestamp_seconds',
    'Time of the newest scheduled backup of the embedded database, in seconds since the Unix epoch (0: none yet).',
    () => (last === null ? 0 : last / 1000)
  )
  log.info('scheduled backups on', { dir, intervalSeconds: config.STUDIO_BACKUP_INTERVAL })
  return {
    details: () => ({ last_backup: last === null ? null : new Date(last).toISOString() }),
    async close() {
      clearInterval(timer)
      await running
    },
  }
}
