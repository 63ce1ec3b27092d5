import * as v from 'valibot'
import { parseDuration } from './duration.js'

// The parsing of the embedded database's scheduled backups' settings (storage/backup-schedule.ts), used by the
// settings table in config.ts, and their one rule against another setting.

export const backupInterval = v.pipe(
  v.string(),
  v.transform(parseDuration),
  v.number('must be a duration such as 24h, 30m or 90s'),
  v.minValue(60, 'must be at least 1m')
)

export const backupKeep = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'must be a whole number'),
  v.transform(Number),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(10_000, 'must be at most 10000')
)

// Scheduled backups are the embedded database's: over PostgreSQL its own tools (or `studio backup`) do it.
export function backupConflict(config: { DATABASE_URL?: string; STUDIO_BACKUP_DIR?: string }): [string, string] | null {
  if (!config.DATABASE_URL || config.STUDIO_BACKUP_DIR === undefined) return null
  return [
    'STUDIO_BACKUP_DIR',
    "is for the embedded database: with DATABASE_URL, back PostgreSQL up with its own tools or run 'studio backup'",
  ]
}
