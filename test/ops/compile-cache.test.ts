import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import module from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { compileCacheDir } from '../../src/ops/compile-cache.js'
import { buildBundle } from '../support/bundle.js'
import { spawnServer } from '../support/processes.js'

const exec = promisify(execFile)
const node = module as { enableCompileCache?: unknown; flushCompileCache?: unknown }
const [canCache, canFlush] = [typeof node.enableCompileCache, typeof node.flushCompileCache].map(
  (f) => f === 'function'
)
const dir = mkdtempSync(join(tmpdir(), 'studio-compile-cache-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
// A copy of the run's bundle (its JavaScript, not the cache other tests' runs of it left), in a dist/ of its own.
const shared = await buildBundle(t)
const copied = (f: string) => !/\.(wasm|data)$/.test(f) && !f.includes('.compile-cache')
cpSync(dirname(shared), join(dir, 'dist'), { recursive: true, filter: copied })
const bin = join(dir, 'dist', 'studio.mjs')
const help = (env: Record<string, string>) =>
  exec(process.execPath, [bin, '--help'], { env: { PATH: process.env.PATH, ...env } })
// The entries Node.js wrote under `root` (in a directory per Node.js version).
const entries = (root: string) =>
  existsSync(root) ? readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()) : []

t.test("the cache goes next to the bundle, or to systemd's cache directory; none from source", async (t) => {
  t.equal(compileCacheDir({}, '/opt/studio/dist/studio.mjs'), '/opt/studio/dist/.compile-cache')
  t.equal(compileCacheDir({ CACHE_DIRECTORY: '/var/cache/studio' }, '/opt/studio/dist/studio.mjs'), '/var/cache/studio')
  t.equal(
    compileCacheDir({ CACHE_DIRECTORY: '/var/cache/a:/var/cache/b' }, null),
    '/var/cache/a',
    'the first of several'
  )
  t.equal(compileCacheDir({}, null), null, 'from source: no cache')
})

t.test(
  `a run of the bundle leaves compiled code for the next (${canCache ? 'on' : 'not on'} ${process.version})`,
  async (t) => {
    const systemd = join(dir, 'systemd')
    t.match((await help({ CACHE_DIRECTORY: systemd })).stdout, 'usage: studio')
    t.equal(entries(systemd).length > 0, canCache, 'in CACHE_DIRECTORY')
    const [operator, unused] = [join(dir, 'operator'), join(dir, 'unused')]
    await help({ NODE_COMPILE_CACHE: operator, CACHE_DIRECTORY: unused })
    t.equal(entries(operator).length > 0, canCache, "NODE_COMPILE_CACHE (Node.js's own setting) comes first")
    t.same(entries(unused), [], 'and CACHE_DIRECTORY is left alone')
    const off = join(dir, 'off')
    await help({ NODE_DISABLE_COMPILE_CACHE: '1', CACHE_DIRECTORY: off })
    t.same(entries(off), [], 'NODE_DISABLE_COMPILE_CACHE=1 turns it off')
    await help({ TMPDIR: join(dir, 'tmp') })
    t.equal(entries(join(dirname(bin), '.compile-cache')).length > 0, canCache, 'by default, next to the bundle')
    t.same(entries(join(dir, 'tmp')), [], "not in the temporary directory (Node.js's own default)")
  }
)

t.test(
  `a server leaves the cache once it listens, killed or not (${canFlush ? 'on' : 'not on'} ${process.version})`,
  async (t) => {
    const cache = join(dir, 'server')
    const env = { CACHE_DIRECTORY: cache, STUDIO_DATA_DIR: join(dir, 'data') }
    const server = await spawnServer(t, env, { cwd: dir })
    t.equal((await fetch(`${server.url}/healthz`)).status, 200)
    await server.stop('SIGKILL')
    t.equal(entries(cache).length > 0, canFlush, 'written before the kill')
  }
)
