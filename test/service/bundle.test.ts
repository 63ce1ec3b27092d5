import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { buildBundle, staticImports } from '../support/bundle.js'
import { testDatabase } from '../support/database.js'
import { spawnServer } from '../support/processes.js'
import { issuedKeys } from '../support/server.js'

const exec = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'studio-bundle-run-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const bin = await buildBundle(t)
const serve = (env: Record<string, string>) => spawnServer(t, env, { cwd: dir })

const cli = (args: string[], env: Record<string, string>) =>
  exec(process.execPath, [bin, ...args], { cwd: dir, env: { PATH: process.env.PATH, ...env } })

async function walkThrough(t: Test, env: Record<string, string>) {
  const server = await serve(env)
  t.equal((await fetch(`${server.url}/healthz`)).status, 200)
  const created = await cli(['keys', 'create', '--email', 'bundle@example.com', '--name', 'Bundle'], env)
  const key = created.stdout.trim().split('\n').at(-1)!
  issuedKeys.push(key)
  const me = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
  t.equal(me.status, 200)
  t.match(await me.json(), { user: { email: 'bundle@example.com', name: 'Bundle' }, plan: 'FREE' })
  const lead = await fetch(`${server.url}/api/v1/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'L', email: 'l@example.com', service: 's', message: 'm' }),
  })
  t.equal(lead.status, 201)
  const list = await cli(['keys', 'list'], env)
  t.match(list.stdout, key.split('_')[1])
  t.equal(await server.stop(), 0, 'SIGTERM: exit 0')
  t.notMatch(server.output(), key.split('_')[2], 'the key never reaches the log')
}

// Every start parses and evaluates dist/studio.mjs (the entry and the CLI) and the chunks it imports statically,
// whole (the rest are chunks loaded when used: PGlite, mail, tracing, undici, the dashboard's pages). The root of undici (fetch, WebSocket, caches, mocks) put it at 808 KiB and the cold start at 3.2x bare
// node's; its Agent alone was half of what a start loaded, so only the first upstream call or delivery loads it, and
// CLI commands never do. The cap guards against that kind of step, not against features: the migrations' SQL and
// each feature's commands and domain code grow it a little (398 KiB before budgets, TPM, autoreplies, retention and
// assignee mail; 435 after).
t.test('what every start loads is small: no undici, no dashboard', async (t) => {
  const dist = dirname(bin)
  // The bundle and every chunk it imports statically, directly or through another.
  const loaded = [basename(bin)]
  for (const file of loaded) {
    const text = readFileSync(join(dist, file), 'utf8')
    t.notMatch(text, 'fetch failed', `undici's fetch is not in ${file}`)
    t.notMatch(text, 'ClientDestroyedError', `undici's client is not in ${file}`)
    t.notMatch(text, 'There is no page here.', `the dashboard's pages are not in ${file}`)
    for (const chunk of staticImports(text)) if (!loaded.includes(chunk)) loaded.push(chunk)
  }
  t.ok(loaded.length > 1, `the bundle imports chunks by the pattern this test reads: ${loaded.join(', ')}`)
  const size = loaded.reduce((sum, file) => sum + statSync(join(dist, file)).size, 0)
  t.ok(size < 480 * 1024, `a start loads ${Math.round(size / 1024)} KiB of JavaScript, under 480 KiB`)
})

t.test('the bundle alone, embedded database', async (t) => {
  await walkThrough(t, { STUDIO_DATA_DIR: join(dir, 'data') })
  const after = await cli(['keys', 'list'], { STUDIO_DATA_DIR: join(dir, 'data') })
  t.match(after.stdout, 'bundle@example.com', 'the data outlives the server')
})

t.test(
  'the bundle alone, external PostgreSQL',
  { skip: !process.env.DATABASE_URL && 'DATABASE_URL is not set' },
  async (t) => {
    await walkThrough(t, await testDatabase(t))
  }
)

// Node modules our dependencies load at their start but a start never uses: undici's HTTP/2 client (node:http2) and
// postgres.js's node:tls, each milliseconds of every cold start. build.mjs leaves the first out and loads the second
// on a connection's first use of TLS.
t.test(
  'a start loads neither node:http2 nor node:tls; TLS still loads when asked for',
  { skip: !process.env.DATABASE_URL && 'DATABASE_URL is not set' },
  async (t) => {
    const env = await testDatabase(t)
    const [hook, list] = [join(dir, 'loaded.mjs'), join(dir, 'loaded.txt')]
    const write = `writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n'))`
    writeFileSync(hook, `import { writeFileSync } from 'node:fs'\nprocess.on('SIGTERM', () => ${write})\n`)
    const server = await serve({ ...env, NODE_OPTIONS: `--import=${hook}` })
    t.equal((await fetch(`${server.url}/healthz`)).status, 200)
    await server.stop()
    const builtins = readFileSync(list, 'utf8').split('\n')
    t.ok(builtins.includes('NativeModule net'), 'the hook saw the builtins')
    t.notOk(builtins.includes('NativeModule http2'), 'no node:http2')
    t.notOk(builtins.includes('NativeModule tls'), 'no node:tls')

    const url = new URL(env.DATABASE_URL)
    url.searchParams.set('sslmode', 'require')
    // A PostgreSQL without SSL refuses the handshake, one with SSL takes it: either way, node:tls was loaded.
    const overTls = await cli(['keys', 'list'], { DATABASE_URL: url.toString() }).then(
      () => ({ ok: true, stderr: '' }),
      (e) => ({ ok: false, stderr: String(e.stderr) })
    )
    t.ok(overTls.ok || /TLS|SSL/.test(overTls.stderr), `postgres.js asked for TLS and got node:tls: ${overTls.stderr}`)
  }
)
