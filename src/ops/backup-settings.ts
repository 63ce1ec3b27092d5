import * as v from 'valibot'
import { parseDuration } from './duration.js'
import type { Setting } from './config.js'

// The settings of the embedded database's scheduled backups (storage/backup-schedule.ts), spread into config.ts's
// table.
export const backupSettings = {
  STUDIO_BACKUP_DIR: {
    schema: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
    doc: 'embedded database: the server writes a backup here every STUDIO_BACKUP_INTERVAL; unset → none',
  },
  STUDIO_BACKUP_INTERVAL: {
    schema: v.pipe(
      v.string(),
      v.transform(parseDuration),
      v.number('must be a duration such as 24h, 30m or 90s'),
      v.minValue(60, 'must be at least 1m')
    ),
    default: '24h',
    doc: 'time between two scheduled backups (e.g. 24h, 6h, 30m)',
  },
  STUDIO_BACKUP_KEEP: {
    schema: v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(10_000, 'must be at most 10000')
    ),
    default: '7',
    doc: 'scheduled backups kept in STUDIO_BACKUP_DIR; older ones are deleted',
  },
} satisfies Record<string, Setting>

// Scheduled backups are the embedded database's: over PostgreSQL its own tools (or `studio backup`) do it.
export function backupConflict(config: { DATABASE_URL?: string; STUDIO_BACKUP_DIR?: string }): [string, string] | null {
  if (!config.DATABASE_URL || config.STUDIO_BACKUP_DIR === undefined) return null
  return [
    'STUDIO_BACKUP_DIR',
    "is for the embedded database: with DATABASE_URL, back PostgreSQL up with its own tools or run 'studio backup'",
  ]
}
