import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually } from './eventually.js'
import type { Test } from 'tap'
import { lacking } from './parts.js'
import type { Teardown } from './teardown.js'
import { freePort } from './ports.js'

// Redis for the tests: the machine's on 127.0.0.1:6379 (each test file under a key prefix of its own), or a
// redis-server of the test's own on a free port, for the tests that stop it. `.ci/run` makes sure both can be had.

const haveRedis = spawnSync('redis-server', ['--version']).status === 0

// The reason to skip a test that needs redis-server, or `false` when it is installed (under CI: a failure instead).
export const redisSkip = (t: Test) =>
  lacking(t, haveRedis, 'no redis-server: apt-get install -y redis-server (.ci/run does)')
const SHARED_REDIS = 'redis://127.0.0.1:6379'

export const uniquePrefix = () => `studio-test:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`

// Whether a Redis answers PING on the port.
function pings(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((ok) => {
    const socket = connect(port, host)
    const done = (answer: boolean) => {
      socket.destroy()
      ok(answer)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('error', () => done(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')))
  })
}

// The machine's Redis when it answers, else one of the test's own.
export async function testRedis(t: Teardown): Promise<string> {
  return (await pings(6379)) ? SHARED_REDIS : (await privateRedis(t)).url
}

export interface PrivateRedis {
  url: string
  stop(): Promise<void>
  start(): Promise<void>
  // Stops (SIGSTOP) or resumes (SIGCONT) the server: connections stay open and get no answer.
  freeze(): void
  thaw(): void
}

export async function privateRedis(t: Teardown): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'studio-redis-'))
  const port = await freePort()
  let server: ChildProcess | undefined
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
  const start = async () => {
    server = spawn('redis-server', args, { stdio: 'ignore' })
    await eventually(() => pings(port), { what: 'redis-server answering' })
  }
  const stop = async () => {
    const s = server
    if (!s || s.exitCode !== null || s.signalCode !== null) return
    const exited = new Promise((ok) => s.once('exit', ok))
    s.kill('SIGCONT')
    s.kill('SIGKILL')
    await exited
  }
  await start()
  t.teardown(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    freeze: () => void server?.kill('SIGSTOP'),
    thaw: () => void server?.kill('SIGCONT'),
  }
}
