import { backup } from '../storage/backup.js'
import { readBackup, restore } from '../storage/restore.js'
import type { Command } from './command.js'

// `studio backup FILE` and `studio restore FILE` (storage/backup.ts, storage/restore.ts).
export const backupCommands: Command[] = [
  {
    name: 'backup',
    args: 'FILE',
    help:
      'write a consistent backup of the database to FILE in plain SQL, while the server runs\n(embedded: ' +
      "through the running server, or directly; DATABASE_URL: PostgreSQL's pg_dump)",
    manual:
      "write a consistent backup of the whole database to FILE, in PostgreSQL's plain SQL format, while " +
      'the server runs (see "Backups and restore"): embedded, through the running server or, when none ' +
      "runs, directly; with `DATABASE_URL`, PostgreSQL's `pg_dump` (not installed: one line saying how to " +
      'install it, exit 2). FILE appears whole or not at all',
    run: async ({ positionals: [file], config, io }) => {
      await backup(config, file)
      io.out(`backup written to ${file}`)
      return 0
    },
  },
  {
    name: 'restore',
    args: 'FILE',
    help:
      'load the backup FILE into an empty database, embedded or PostgreSQL (a database that\nis not empty is ' +
      'refused, exit 2); the way from the embedded database to PostgreSQL',
    manual:
      "load the backup FILE (`studio backup`'s, or `pg_dump --inserts`') into an empty database, embedded " +
      'or PostgreSQL, in one transaction; a database that is not empty is refused with one line and exit ' +
      '2, and nothing changes. The way from the embedded database to PostgreSQL (see "Moving to ' +
      'PostgreSQL")',
    run: ({ positionals: [file], io, database }) => {
      const text = readBackup(file)
      return database(
        async (sql) => {
          await restore(sql, text)
          io.out(`restored ${file}`)
        },
        { migrate: false }
      )
    },
  },
]
