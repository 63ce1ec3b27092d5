import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { parseConfig } from '../../src/ops/config.js'
import { openDatabase } from '../../src/storage/db.js'
import { migrate } from '../../src/storage/migrate.js'
import { buildBundle } from '../support/bundle.js'
import { testDatabase } from '../support/database.js'
import { rootPath } from '../support/paths.js'

// A database that a newer release migrated (one migration more than this code knows) is refused by `serve` and by
// every command that opens it: one line naming both schema versions, exit code 2, nothing changed. On the embedded
// database and, with DATABASE_URL, on PostgreSQL.

const dbEnv = await testDatabase(t)
const bin = await buildBundle(t)
const newest = readdirSync(rootPath('sql'))
  .filter((f) => /^\d{3}_/.test(f))
  .sort()
  .at(-1)!
  .slice(0, 3)
const future = String(Number(newest) + 1).padStart(3, '0')
const futureName = `${future}_from_a_newer_release.sql`
const refusal = new RegExp(
  `^studio: the database is at schema version ${future}, this bundle .* at ${newest}: .*${futureName}`
)

async function migrations() {
  const db = await openDatabase(parseConfig(dbEnv))
  try {
    return (await db.sql<{ name: string }[]>`select name from schema_migrations order by name`).map((r) => r.name)
  } finally {
    await db.close()
  }
}

{
  const db = await openDatabase(parseConfig(dbEnv))
  await migrate(db.sql)
  await db.sql`insert into schema_migrations (name) values (${futureName})`
  await db.close()
}
const before = await migrations()

// The bundle run as a process: its exit code and what it wrote to stderr.
function bundle(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'error', ...dbEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')))
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  return new Promise<{ code: number | null; out: string; err: string[] }>((done) =>
    child.once('exit', (code) => done({ code, out, err: err.split('\n').filter(Boolean) }))
  )
}

t.test('the bundle refuses to serve a database a newer release migrated', async (t) => {
  const r = await bundle(['serve'])
  t.equal(r.code, 2, 'exit code 2')
  t.equal(r.err.length, 1, `one line: ${r.err.join('\n')}`)
  t.match(r.err[0], refusal)
  t.notMatch(r.out, /listening/, 'never listened')
})

t.test('the CLI refuses it too, before changing anything', async (t) => {
  for (const args of [['keys', 'list'], ['migrate'], ['migrate', '--dry-run'], ['keys', 'create', '--plan', 'PRO']]) {
    const err: string[] = []
    const code = await run(args, dbEnv, { out: () => {}, err: (l) => err.push(l) })
    t.equal(code, 2, args.join(' '))
    t.equal(err.length, 1, args.join(' '))
    t.match(err[0], refusal, args.join(' '))
  }
  t.same(await migrations(), before, 'no migration recorded')
})

t.test(
  'with STUDIO_WORKERS, the primary exits 2 as well',
  { skip: !process.env.DATABASE_URL && 'DATABASE_URL is not set (workers need PostgreSQL)' },
  async (t) => {
    const r = await bundle(['serve'], { STUDIO_WORKERS: '2', STUDIO_REDIS_URL: 'redis://127.0.0.1:1' })
    t.equal(r.code, 2)
    t.match(r.err[0], refusal)
  }
)
