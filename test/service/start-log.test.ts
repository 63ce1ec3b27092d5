import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { emptyPostgres } from '../support/database.js'
import { spawnServer } from '../support/processes.js'

// What an operator sees from `studio serve` (the bundle, a process of its own): where it listens, the dashboard, the
// database, AI and mail on the listening line, the echo upstream said loudly, a line saying it stopped, and never
// the database's password.

const PASSWORD = 'pw-never-in-a-log-4711'
const lines = (output: string) => output.split('\n').filter(Boolean)

t.test('pretty, over PostgreSQL with a password, echo on, mail off', { skip: !process.env.DATABASE_URL }, async (t) => {
  const { DATABASE_URL } = await emptyPostgres(t, process.env.DATABASE_URL as string, 'studio_start_log')
  const withPassword = new URL(DATABASE_URL)
  withPassword.password = PASSWORD
  const server = await spawnServer(t, {
    DATABASE_URL: withPassword.toString(),
    LOG_FORMAT: 'pretty',
    STUDIO_UPSTREAM: 'echo',
  })
  const database = `${withPassword.host}${withPassword.pathname}`
  t.equal(await server.stop('SIGTERM'), 0)
  const out = lines(server.output())
  const listening = out.find((l) => / INFO {2}listening /.test(l)) ?? ''
  t.match(
    listening,
    new RegExp(
      `^\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  listening url=${server.url} dashboard=${server.url}/dashboard ` +
        `database="PostgreSQL at ${database}" ai=echo mail=off pid=\\d+$`
    )
  )
  t.ok(
    out.some((l) => / WARN {2}the echo upstream is on: /.test(l)),
    'echo said loudly'
  )
  t.match(out.at(-1), / INFO {2}stopped code=0$/, 'the last line says it stopped')
  t.notOk(
    out.some((l) => l.startsWith('{')),
    'no JSON line'
  )
  t.notMatch(server.output(), PASSWORD, 'never the password')
})

t.test('JSON when stdout is not a terminal; embedded: its directory; AI off says what to set', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'studio-start-log-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const server = await spawnServer(t, { STUDIO_DATA_DIR: dir, STUDIO_DASHBOARD: 'off', ANTHROPIC_API_KEY: '' })
  t.equal(await server.stop('SIGTERM'), 0)
  const out = lines(server.output()).map((l) => JSON.parse(l))
  t.match(
    out.find((l) => l.msg === 'listening'),
    {
      level: 'info',
      url: server.url,
      dashboard: 'off',
      database: `embedded in ${dir}`,
      ai: 'AI off (set ANTHROPIC_API_KEY for anthropic, or STUDIO_UPSTREAM=echo to try it)',
      mail: 'off',
    }
  )
  t.match(out.at(-1), { level: 'info', msg: 'stopped', code: 0 })
})
