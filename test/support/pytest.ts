import { execFile, spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { lacking } from './parts.js'
import { rootPath } from './paths.js'

// The pytest suites that run inside `npm test` (test/clients/python.test.ts, test/completions/python-sdks.test.ts),
// with the interpreter STUDIO_PYTHON names (.ci/run makes one with everything they need) or one of their own.

const exec = promisify(execFile)

const hasPython = spawnSync('python3', ['--version']).status === 0

// The reason to skip a test that needs python3, or `false` when it is installed (under CI: a failure instead).
export const pythonSkip = (t: Test) => lacking(t, hasPython, 'no python3: apt-get install -y python3 python3-venv')

export const pipInstall = (bin: string, args: string[]) =>
  exec(bin, ['-m', 'pip', 'install', '-q', '--retries', '0', ...args], { timeout: 170_000 })

// The interpreter of a virtual environment kept in node_modules/.cache/NAME, made once with `packages` (from the
// package index pip is set up with).
export async function cachedPython(name: string, packages: string[]): Promise<string> {
  const dir = rootPath(`node_modules/.cache/${name}`)
  const bin = join(dir, 'bin', 'python')
  if (!existsSync(join(dir, 'ready'))) {
    await exec('python3', ['-m', 'venv', '--clear', dir])
    await pipInstall(bin, packages)
    writeFileSync(join(dir, 'ready'), '')
  }
  return bin
}

// The counts in pytest's closing line ("12 passed, 1 warning in 3.2s"), by outcome.
function outcomes(output: string): Record<string, number> {
  const summary = output.trim().split('\n').at(-1) ?? ''
  return Object.fromEntries([...summary.matchAll(/(\d+) (\w+)/g)].map(([, n, outcome]) => [outcome, Number(n)]))
}

interface PytestRun {
  // The working directory, and the tests in it to run.
  cwd: string
  tests: string
  // The environment besides PATH.
  env: Record<string, string | undefined>
}

// Runs pytest with the interpreter `bin`, and asserts that its tests passed, none skipped or failed.
export async function pytest(t: Test, bin: string, { cwd, tests, env }: PytestRun) {
  const run = await exec(bin, ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', '-rs', tests], {
    cwd,
    env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1', ...env },
  })
    .then((r) => ({ code: 0, out: r.stdout + r.stderr }))
    .catch((e) => ({ code: e.code as number, out: `${e.stdout}${e.stderr}` }))
  t.equal(run.code, 0, run.out)
  const counts = outcomes(run.out)
  t.ok(counts.passed > 0, 'tests passed')
  t.same(
    Object.keys(counts).filter((k) => !/^(passed|warnings?)$/.test(k)),
    [],
    'none skipped or failed',
    { output: run.out }
  )
}
