import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import postgres from 'postgres'
import t, { type Test } from 'tap'
import { buildBundle } from '../support/bundle.js'
import { testDatabase } from '../support/database.js'
import { rootPath } from '../support/paths.js'
import { type Spawned, spawnServer } from '../support/processes.js'
import { issuedKeys } from '../support/server.js'

// A rolling upgrade: the previous release (the bundle of the commit before the newest migration was added, built
// with that commit's own build.mjs) serves, under a load of leads and GET /me, while this release starts over the
// same PostgreSQL and applies that migration; then both serve the load side by side. No request may fail.
// PostgreSQL only: the embedded database serves one process, so it has no rolling upgrade.

const exec = promisify(execFile)
const root = rootPath('')
const git = async (...args: string[]) => (await exec('git', ['-C', root, ...args])).stdout.trim()

// The commit before the newest migration, or why there is none to build (not a git checkout, a shallow clone).
async function previousRelease(): Promise<{ commit: string; migration: string } | string> {
  const migration = readdirSync(rootPath('sql'))
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
    .at(-1)!
  try {
    const added = await git('log', '-1', '--diff-filter=A', '--format=%H', '--', `sql/${migration}`)
    if (!added) return `sql/${migration} is not committed yet`
    return { commit: await git('rev-parse', '--verify', `${added}^`), migration }
  } catch (e) {
    return `no git history to build the previous release from (${(e as Error).message.split('\n')[0]})`
  }
}

async function buildAt(t: Test, commit: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'studio-previous-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const src = join(dir, 'src')
  await exec('sh', ['-c', `mkdir "$2" && git -C "$1" archive "$3" | tar -x -C "$2"`, 'sh', root, src, commit])
  symlinkSync(rootPath('node_modules'), join(src, 'node_modules'))
  const out = join(dir, 'dist')
  await exec(process.execPath, ['build.mjs'], { cwd: src, env: { ...process.env, STUDIO_BUILD_OUTDIR: out } })
  return join(out, 'studio.mjs')
}

const previous = process.env.DATABASE_URL ? await previousRelease() : 'DATABASE_URL is not set'
const skip =
  typeof previous === 'string' && `rolling upgrades are a PostgreSQL thing, run over one database: ${previous}`

interface Tally {
  ok: number
  failed: string[]
}

// Workers that send, in turn, a lead and a GET /me to each server of `targets` (read at each request, so a server
// joins the load when it is pushed), until `done()`; every answer but a 201 or a 200 is a failure.
function load(targets: Spawned[], key: string, tallies: Map<Spawned, Tally>, done: () => boolean) {
  let n = 0
  const worker = async () => {
    while (!done()) {
      const server = targets[n++ % targets.length]
      const tally = tallies.get(server)!
      const lead = n % 2 === 0
      const init: RequestInit = lead
        ? {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Lead ${n}`, email: `lead${n}@example.com`, service: 's', message: 'm' }),
          }
        : { headers: { authorization: `Bearer ${key}` } }
      try {
        const r = await fetch(`${server.url}/api/v1/${lead ? 'leads' : 'me'}`, init)
        await r.arrayBuffer()
        if (r.status === (lead ? 201 : 200)) tally.ok++
        else tally.failed.push(`${lead ? 'POST /leads' : 'GET /me'}: ${r.status}`)
      } catch (e) {
        tally.failed.push(String(e))
      }
    }
  }
  return Promise.all(Array.from({ length: 4 }, worker))
}

t.test('the previous release and this one over one PostgreSQL, under load', { skip }, async (t) => {
  if (typeof previous === 'string') return
  t.comment(`previous release: ${previous.commit.slice(0, 12)}, before ${previous.migration}`)
  const [oldBin, newBin] = await Promise.all([buildAt(t, previous.commit), buildBundle(t)])
  const dbEnv = await testDatabase(t)
  const env = { ...dbEnv, STUDIO_RATE_LIMIT: '1000000' }
  const created = await exec(process.execPath, [oldBin, 'keys', 'create', '--email', 'rolling@example.com'], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH, ...env },
  })
  const key = created.stdout.trim().split('\n').at(-1)!
  issuedKeys.push(key)
  const sql = postgres(dbEnv.DATABASE_URL, { max: 1, onnotice: () => {} })
  t.teardown(() => sql.end())
  const applied = async () => (await sql<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name)
  t.notOk((await applied()).includes(previous.migration), 'the previous release does not have the newest migration')

  const oldServer = await spawnServer(t, env, { cli: [oldBin], cwd: tmpdir() })
  const targets = [oldServer]
  const tallies = new Map<Spawned, Tally>([[oldServer, { ok: 0, failed: [] }]])
  // Enough requests on each side once both serve; bounded, so that a server that stops answering ends the test.
  const enough = () => [...tallies.values()].every((x) => x.ok >= 150)
  const bound = () => [...tallies.values()].reduce((sum, x) => sum + x.ok + x.failed.length, 0) > 20_000
  let both = false
  const running = load(targets, key, tallies, () => (both && enough()) || bound())

  const newServer = await spawnServer(t, env, { cli: [newBin], cwd: tmpdir() })
  t.ok((await applied()).includes(previous.migration), 'this release applied the newest migration')
  tallies.set(oldServer, { ok: 0, failed: tallies.get(oldServer)!.failed })
  tallies.set(newServer, { ok: 0, failed: [] })
  targets.push(newServer)
  both = true
  await running

  for (const [server, tally] of tallies) {
    const which = server === oldServer ? 'previous release' : 'this release'
    t.same(tally.failed, [], `${which}: no failed request`)
    t.ok(tally.ok >= 150, `${which}: served ${tally.ok} requests after the migration`)
  }
  t.equal(await oldServer.stop(), 0, 'the previous release stops cleanly')
  t.equal(await newServer.stop(), 0, 'this release stops cleanly')
})
