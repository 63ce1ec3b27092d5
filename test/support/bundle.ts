import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { rootPath } from './paths.js'
import type { Teardown } from './teardown.js'

// The bundle (dist/studio.mjs) the tests run as separate processes is built once per `npm test`: tap's `before` step
// builds it into a temporary directory and writes that directory's path to RUN_BUNDLE, its `after` step removes both.
// A test file run on its own (plain node) builds its own.

const RUN_BUNDLE = rootPath('.tap/bundle-dir')
const execFileP = promisify(execFile)

async function build(dir: string) {
  const out = join(dir, 'dist')
  const env = { ...process.env, STUDIO_BUILD_OUTDIR: out }
  await execFileP(process.execPath, ['build.mjs'], { cwd: rootPath(''), env })
  return join(out, 'studio.mjs')
}

const newDir = () => mkdtempSync(join(tmpdir(), 'studio-bundle-'))

export async function buildRunBundle() {
  removeRunBundle()
  const dir = newDir()
  await build(dir)
  mkdirSync(dirname(RUN_BUNDLE), { recursive: true })
  writeFileSync(RUN_BUNDLE, dir)
}

export function removeRunBundle() {
  if (existsSync(RUN_BUNDLE)) rmSync(readFileSync(RUN_BUNDLE, 'utf8'), { recursive: true, force: true })
  rmSync(RUN_BUNDLE, { force: true })
}

function runBundle(): string | undefined {
  const bin = existsSync(RUN_BUNDLE) && join(readFileSync(RUN_BUNDLE, 'utf8'), 'dist', 'studio.mjs')
  return bin && existsSync(bin) ? bin : undefined
}

let built: Promise<string> | undefined

// The path of studio.mjs: the run's bundle, or one built (once per test process) when there is none.
export function buildBundle(t: Teardown): Promise<string> {
  return (built ??= (async () => {
    const bin = runBundle()
    if (bin) return bin
    const dir = newDir()
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    return build(dir)
  })())
}

// The chunks a file of the bundle imports statically (`from"./…"`, `import"./…"`), as esbuild writes them.
export const staticImports = (text: string): string[] =>
  [...text.matchAll(/(?:from|import)\s*"\.\/([\w-]+\.mjs)"/g)].map((m) => m[1])
