import { build } from 'esbuild'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const migrations = readdirSync('sql')
  .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
  .sort()
  .map((name) => ({ name, sql: readFileSync(join('sql', name), 'utf8') }))

const out = process.env.STUDIO_BUILD_OUTDIR || 'dist'
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
await build({
  // dump-worker: the worker thread of an embedded database's backup (src/storage/embedded-backup.ts).
  entryPoints: { studio: 'src/main.ts', 'dump-worker': 'src/storage/dump-worker.ts' },
  outdir: out,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: !process.env.STUDIO_BUILD_DEBUG,
  legalComments: 'none',
  define: {
    STUDIO_MIGRATIONS: JSON.stringify(migrations),
    STUDIO_VERSION: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version),
  },
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  logLevel: 'warning',
})

// PGlite loads its WebAssembly and data files next to the module that imports it.
const pglite = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'))
for (const f of ['pglite.wasm', 'pglite.data', 'initdb.wasm']) copyFileSync(join(pglite, f), join(out, f))
// And pglite-tools its pg_dump (`studio backup`), next to the chunk that imports it.
const tools = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite-tools/pg_dump'))
copyFileSync(join(tools, 'pg_dump.wasm'), join(out, 'pg_dump.wasm'))
console.log(`built ${out}: ${readdirSync(out).join(' ')}`)
