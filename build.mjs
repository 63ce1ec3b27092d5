import { build } from 'esbuild'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, sep } from 'node:path'

const migrations = readdirSync('sql')
  .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
  .sort()
  .map((name) => ({ name, sql: readFileSync(join('sql', name), 'utf8') }))

// Two of our dependencies load a Node module at their start that a start does not use, and each costs milliseconds
// of every cold start: undici's HTTP/2 client (node:http2; we never ask for h2, so no socket negotiates it) and
// postgres.js's node:tls (used only for a connection with `ssl`, and then loaded on that connection's first use).
// A release of either that no longer has the import fails the build, rather than leaving the plugin unused.
const inPackage = (file, name) => file.includes(`${sep}node_modules${sep}${name}${sep}`)
const lean = {
  name: 'lean-start',
  setup(b) {
    const replaced = new Set()
    const replace = (path) => replaced.add(path) && { path, namespace: 'lean' }
    b.onResolve({ filter: /client-h2\.js$/ }, (a) =>
      inPackage(a.importer, 'undici') ? replace('client-h2') : undefined
    )
    b.onResolve({ filter: /^(node:)?tls$/ }, (a) => (inPackage(a.importer, 'postgres') ? replace('tls') : undefined))
    b.onEnd(() => {
      const missing = ['client-h2', 'tls'].filter((p) => !replaced.has(p))
      if (missing.length) throw new Error(`lean-start: no ${missing.join(', ')} import found; review build.mjs`)
    })
    b.onLoad({ filter: /^client-h2$/, namespace: 'lean' }, () => ({
      contents: "module.exports = () => { throw new Error('HTTP/2 is not in this build') }",
      loader: 'js',
    }))
    b.onLoad({ filter: /^tls$/, namespace: 'lean' }, () => ({
      contents: "export default { connect: (...args) => require('node:tls').connect(...args) }",
      loader: 'js',
    }))
  },
}

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
  plugins: [lean],
  logLevel: 'warning',
})

// PGlite loads its WebAssembly and data files next to the module that imports it.
const pglite = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'))
for (const f of ['pglite.wasm', 'pglite.data', 'initdb.wasm']) copyFileSync(join(pglite, f), join(out, f))
// And pglite-tools its pg_dump (`studio backup`), next to the chunk that imports it.
const tools = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite-tools/pg_dump'))
copyFileSync(join(tools, 'pg_dump.wasm'), join(out, 'pg_dump.wasm'))
console.log(`built ${join(out, 'studio.mjs')}`)
