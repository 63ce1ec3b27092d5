#!/usr/bin/env node
import { enableCompileCache } from './ops/compile-cache.js'

// Before the CLI is imported, so that all it loads (all but esbuild's helpers and the migrations' text, imported
// above) is compiled from the cache (ops/compile-cache.ts).
enableCompileCache(process.env)
const { run } = await import('./cli/cli.js')

run(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`studio: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    process.exit(1)
  }
)
