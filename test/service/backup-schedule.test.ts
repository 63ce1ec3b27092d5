import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { parseConfig } from '../../src/ops/config.js'
import { cliOn } from '../support/cli.js'
import { eventually } from '../support/eventually.js'
import { startTestServer } from '../support/server.js'

// The embedded database's scheduled backups (STUDIO_BACKUP_DIR): one appears when due, written whole, and all but the
// newest STUDIO_BACKUP_KEEP are deleted; the newest one's time is in /readyz and a metric. Time is the test's: the
// schedule reads an injected clock and looks every 20 ms. Always over an embedded database of its own (scheduled
// backups are the embedded database's), whatever DATABASE_URL says.

const HOUR = 3_600_000
const root = mkdtempSync(join(tmpdir(), 'studio-backups-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))
const dir = join(root, 'backups')
const dbEnv = { STUDIO_DATA_DIR: join(root, 'data') }
const name = (ms: number) => `studio-backup-${new Date(ms).toISOString().replace(/[-:.]/g, '')}.sql`

let now = Date.parse('2026-11-25T09:00:00.000Z')
const older = [4, 3, 2, 1].map((days) => name(now - days * 24 * HOUR))
mkdirSync(dir)
for (const n of [...older, 'notes.txt']) writeFileSync(join(dir, n), '-- an older backup\n')

const s = await startTestServer(
  t,
  { STUDIO_BACKUP_DIR: dir, STUDIO_BACKUP_INTERVAL: '24h', STUDIO_BACKUP_KEEP: '3' },
  { dbEnv, backups: { clock: () => now, checkMs: 20 } }
)
const key = await s.key({ email: 'kept@example.com' })
const files = () => readdirSync(dir).sort()
const lastBackup = async () => ((await (await s.fetch('/readyz')).json()) as any).details.last_backup

t.test('a backup is due an interval after the newest one: at once here, and old ones go', async (t) => {
  await eventually(() => files().includes(name(now)), { what: 'the scheduled backup', timeout: 60_000 })
  t.same(files(), [older[2], older[3], name(now), 'notes.txt'].sort(), 'the newest 3 kept, nothing else touched')
  t.match(readFileSync(join(dir, name(now)), 'utf8'), /^-- PostgreSQL database dump$/m)
  t.equal(statSync(join(dir, name(now))).mode & 0o777, 0o600, 'readable by its owner only')
  t.equal(await lastBackup(), new Date(now).toISOString())
  t.equal(s.metric('studio_backup_last_success_timestamp_seconds'), now / 1000)
})

t.test('the next one an interval later', async (t) => {
  const first = now
  now += 24 * HOUR
  await eventually(() => files().includes(name(now)), { what: 'the next scheduled backup', timeout: 60_000 })
  t.same(files(), [older[3], name(first), name(now), 'notes.txt'].sort())
  t.equal(await lastBackup(), new Date(now).toISOString())
  t.equal(s.metric('studio_backup_last_success_timestamp_seconds'), now / 1000)
})

t.test('a scheduled backup restores, with its key', async (t) => {
  const target = { STUDIO_DATA_DIR: join(root, 'restored') }
  t.equal((await cliOn(target)(['restore', join(dir, name(now))])).code, 0)
  const server = await startTestServer(t, {}, { dbEnv: target })
  t.equal((await server.fetch('/api/v1/me', { key })).status, 200)
})

t.test('bad settings are refused with the variable named', async (t) => {
  for (const [value, reason] of [
    ['1 day', 'must be a duration such as 24h, 30m or 90s'],
    ['30s', 'must be at least 1m'],
  ]) {
    t.throws(() => parseConfig({ STUDIO_BACKUP_INTERVAL: value }), {
      variable: 'STUDIO_BACKUP_INTERVAL',
      message: `STUDIO_BACKUP_INTERVAL: ${reason}`,
    })
    const err: string[] = []
    const code = await run(
      ['migrate'],
      { ...dbEnv, STUDIO_BACKUP_INTERVAL: value },
      { out: () => {}, err: (l) => err.push(l) }
    )
    t.equal(code, 2)
    t.match(err, [`studio: invalid configuration: STUDIO_BACKUP_INTERVAL: ${reason}`])
  }
  t.throws(() => parseConfig({ STUDIO_BACKUP_KEEP: '0' }), /STUDIO_BACKUP_KEEP: must be at least 1/)
  t.throws(
    () => parseConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db', STUDIO_BACKUP_DIR: dir }),
    /STUDIO_BACKUP_DIR: is for the embedded database/
  )
})
