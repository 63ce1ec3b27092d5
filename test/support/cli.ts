import { run } from '../../src/cli/cli.js'
import type { DbEnv } from './database.js'
import { issuedKeys } from './server.js'

// The CLI's run(), in this process, against a test database, as an operator would use it: its exit code, the lines
// it wrote, and its last line (a new key, which joins the keys the suite searches the logs for).
export function cliOn(dbEnv: DbEnv) {
  return async (args: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const code = await run(args, dbEnv, { out: (l) => out.push(l), err: (l) => err.push(l) })
    const key = out.at(-1)
    if (code === 0 && key?.startsWith('studio_')) issuedKeys.push(key)
    return { code, out, err, key: key! }
  }
}
