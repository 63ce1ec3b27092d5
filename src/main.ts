#!/usr/bin/env node
import { run } from './cli/cli.js'

run(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`studio: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    process.exit(1)
  }
)
