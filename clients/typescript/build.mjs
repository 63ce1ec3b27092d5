// Builds dist/: index.js (one ESM file, esbuild, no dependencies) and the .d.ts declarations (tsc).
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const here = fileURLToPath(new URL('.', import.meta.url))
rmSync(`${here}dist`, { recursive: true, force: true })
await build({
  entryPoints: [`${here}src/index.ts`],
  outfile: `${here}dist/index.js`,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  legalComments: 'none',
})
const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'))
execFileSync(process.execPath, [tsc, '-p', `${here}tsconfig.json`], { stdio: 'inherit' })
