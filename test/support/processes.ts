import { spawn } from 'node:child_process'
import { tmpdir } from 'node:os'
import { buildBundle } from './bundle.js'
import { fromRoot, rootPath } from './paths.js'
import type { Teardown } from './teardown.js'

const spawned = new Set<ReturnType<typeof spawn>>()
const killAll = () => spawned.forEach((c) => c.exitCode === null && c.kill('SIGKILL'))
process.once('exit', killAll)
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    killAll()
    process.exit(1)
  })

// node's arguments that run the CLI from its TypeScript source (tap's loader), without a bundle.
export const FROM_SOURCE = [
  `--import=${fromRoot('node_modules/@tapjs/typescript/dist/esm/import.mjs').href}`,
  rootPath('src/main.ts'),
]

export interface Spawned {
  url: string
  output(): string
  running(): boolean
  exited: Promise<number | null>
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

// Runs `studio serve` as a separate process (from the bundle, or from `cli` such as FROM_SOURCE, in the repository so
// that its tsconfig applies); resolves once it listens.
export async function spawnServer(
  t: Teardown,
  env: Record<string, string>,
  { cli, cwd = cli ? rootPath('') : tmpdir() }: { cwd?: string; cli?: string[] } = {}
): Promise<Spawned> {
  const args = [...(cli ?? [await buildBundle(t)]), 'serve']
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  spawned.add(child)
  let output = ''
  child.stderr.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((ok) => child.once('exit', ok))
  const running = () => child.exitCode === null && child.signalCode === null
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (running()) child.kill(signal)
    return exited
  }
  // Before waiting: a server that never says it listens is killed too, not left running after the test.
  t.teardown(() => stop('SIGKILL'))
  const url = await new Promise<string>((ok, fail) => {
    child.stdout.on('data', (d) => {
      output += d
      const m = /(?:"url":"|url=)(http:[^"\s]+)/.exec(output)
      if (m) ok(m[1])
    })
    void exited.then((code) => fail(new Error(`exited ${code}: ${output}`)))
    // A guard against a hang, not a measure: a first start initialises the embedded database, minutes on a busy machine.
    setTimeout(() => fail(new Error(`not listening after 120 s: ${output}`)), 120_000).unref()
  })
  return { url, stop, running, exited, output: () => output }
}
