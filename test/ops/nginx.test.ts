import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { spawnServer } from '../support/processes.js'
import { lacking } from '../support/parts.js'
import { issueKey } from '../support/server.js'
import { freePort } from '../support/ports.js'
import { redisSkip, testRedis, uniquePrefix } from '../support/redis.js'
import { eventually } from '../support/eventually.js'

// contrib/nginx.conf works as shipped: two instances behind it (addresses and port rewritten), one limit for both.

const exec = promisify(execFile)
const haveNginx = spawnSync('nginx', ['-v']).status === 0
const skip = redisSkip(t) || lacking(t, haveNginx, 'no nginx: apt-get install -y nginx (.ci/run does)')

t.test('two instances behind contrib/nginx.conf share one rate limit', { skip }, async (t) => {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const key = await issueKey(db.sql, { email: 'nginx@example.com' })
  const env = {
    ...dbEnv,
    STUDIO_REDIS_URL: await testRedis(t),
    STUDIO_REDIS_PREFIX: uniquePrefix(),
    STUDIO_REDIS_TIMEOUT_MS: '1000',
    STUDIO_DB_TIMEOUT_MS: '60000',
    STUDIO_RATE_LIMIT: '10',
  }
  const [a, b] = [await spawnServer(t, env), await spawnServer(t, env)]
  const dir = mkdtempSync(join(tmpdir(), 'studio-nginx-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const port = await freePort()
  const site = readFileSync(new URL('../../contrib/nginx.conf', import.meta.url), 'utf8')
    .replace('server 10.0.0.11:8080', `server ${new URL(a.url).host}`)
    .replace('server 10.0.0.12:8080', `server ${new URL(b.url).host}`)
    .replace('listen 80;', `listen 127.0.0.1:${port};`)
  writeFileSync(join(dir, 'studio.conf'), site)
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((p) => `${p}_temp_path ${dir};`).join(' ')
  const main = `pid ${dir}/nginx.pid; error_log ${dir}/error.log; events {}
http { access_log off; ${temp} include ${dir}/studio.conf; }`
  writeFileSync(join(dir, 'main.conf'), main)
  await exec('nginx', ['-t', '-c', join(dir, 'main.conf')])
  await exec('nginx', ['-c', join(dir, 'main.conf')])
  t.teardown(() => exec('nginx', ['-c', join(dir, 'main.conf'), '-s', 'stop']).catch(() => {}))

  const url = `http://127.0.0.1:${port}/api/v1/me`
  const healthy = () =>
    fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false
    )
  t.ok(await eventually(healthy, { interval: 100, what: 'nginx answering' }), 'nginx answers')
  const got: string[] = []
  const boots = new Set<string>()
  for (let i = 0; i < 12; i++) {
    const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
    await r.arrayBuffer()
    got.push(`${r.status} ${r.headers.get('ratelimit')}`)
    boots.add(String(r.headers.get('x-request-id')).split('-')[0])
  }
  t.equal(boots.size, 2, 'both instances answered')
  t.same(got, [
    ...Array.from({ length: 10 }, (_, i) => `200 "default";r=${9 - i};t=60`),
    '429 "default";r=0;t=60',
    '429 "default";r=0;t=60',
  ])
})
