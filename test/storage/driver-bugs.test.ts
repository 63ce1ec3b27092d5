import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import postgres from 'postgres'
import { testDatabase } from '../support/database.js'
import { rootPath } from '../support/paths.js'

// The two postgres.js bugs that src/storage/driver-guard.ts keeps from ending the service, each reproduced in a plain
// Node process with the driver alone. A case that fails here means the upstream fixed that bug: remove its half of
// the guard (and this case).

const exec = promisify(execFile)
// A script run by Node with its default handling of errors nobody catches (it exits 1), from the project's root.
async function run(script: string, env: Record<string, string>) {
  const options = { cwd: rootPath(''), env: { PATH: process.env.PATH, ...env } }
  return exec(process.execPath, ['--input-type=module', '-e', script], { ...options, timeout: 60_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr })
  )
}

const skip = !process.env.DATABASE_URL && 'DATABASE_URL is not set'

t.test('a failed array-type fetch is a rejection nobody awaits (porsager/postgres#1192)', { skip }, async (t) => {
  const { DATABASE_URL } = await testDatabase(t)
  // A role that may not read pg_type in this database: the driver's type fetch on its connection fails.
  const role = `driver_bug_${process.pid}`
  const owner = postgres(DATABASE_URL, { max: 1, onnotice: () => {} })
  t.teardown(async () => {
    await owner`select pg_terminate_backend(pid) from pg_stat_activity where usename = ${role}`
    await owner.unsafe(`drop role if exists ${role}`)
    await owner.end()
  })
  await owner.unsafe(`create role ${role} login`)
  await owner.unsafe('revoke select on pg_catalog.pg_type from public')
  const url = new URL(DATABASE_URL)
  url.username = role
  const script = `
    import postgres from 'postgres'
    const sql = postgres(process.env.URL, { max: 1, onnotice: () => {} })
    await sql\`select 1\`.catch(() => {})
    await new Promise((r) => setTimeout(r, 200))
    process.exit(0)`
  const { code, stderr } = await run(script, { URL: url.toString() })
  t.equal(code, 1, 'the process ends on it (if not, the upstream fixed it: drop the unhandledRejection guard)')
  t.match(stderr, /permission denied for table pg_type/)
})

t.test(
  'a transaction whose connection closes writes to a null socket (porsager/postgres#1154)',
  { skip },
  async (t) => {
    const { DATABASE_URL } = await testDatabase(t)
    // Not every close lands between the statement and the ROLLBACK (about one try in four here, fewer under load):
    // tries for up to 40 s, each on a pool of its own (one that missed may hang), each given a second.
    const script = `
    import postgres from 'postgres'
    const admin = postgres(process.env.URL, { max: 1, onnotice: () => {} })
    const end = Date.now() + 40_000
    while (Date.now() < end) {
      const sql = postgres(process.env.URL, { max: 1, onnotice: () => {} })
      const attempt = sql.begin(async (tx) => {
        const [{ pid }] = await tx\`select pg_backend_pid() as pid\`
        await admin\`select pg_terminate_backend(\${pid})\`
        await tx\`select 1\`
      }).catch(() => {})
      await Promise.race([attempt, new Promise((r) => setTimeout(r, 1000))])
    }
    process.exit(0)`
    const { code, stderr } = await run(script, { URL: DATABASE_URL })
    t.equal(code, 1, 'the process ends on it (if not, the upstream fixed it: drop the uncaughtException guard)')
    t.match(stderr, /TypeError: Cannot read properties of null \(reading 'write'\)/)
  }
)
