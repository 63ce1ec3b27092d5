import { userInfo } from 'node:os'
import { ConfigError, type Config, parseConfig } from '../ops/config.js'
import { openDatabase } from '../storage/db.js'
import { migrate, NewerDatabaseError } from '../storage/migrate.js'
import { Refused } from '../ops/refused.js'
import { type Command, type Invocation, type Io, parseInvocation, UsageError } from './command.js'
import { commands } from './commands.js'
import { helpText, usageLine } from './help.js'

export type { Io } from './command.js'

const USAGE = usageLine(commands)
export const HELP = helpText(commands)

const stdio: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) }

// The command named by the first one or two words of argv (none: serve), and the arguments after its name.
function find(argv: string[]): { command: Command; rest: string[] } {
  const [first = 'serve', second] = argv
  for (const command of commands) {
    const words = command.name.split(' ')
    if (words[0] === first && (words.length === 1 || words[1] === second))
      return { command, rest: argv.slice(words.length) }
  }
  throw new UsageError(`unknown command: ${[first, second].filter(Boolean).join(' ')}`)
}

// Runs one command line; the exit code: 0 done, 1 failed, 2 bad arguments or configuration, a database that a
// newer release migrated, or a refusal (a restore into a database that is not empty, no pg_dump).
export async function run(argv: string[], env: Record<string, string | undefined>, io: Io = stdio): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    io.out(HELP)
    return 0
  }
  let config: Config
  try {
    config = parseConfig(env)
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    io.err(`studio: invalid configuration: ${e.message}`)
    return 2
  }
  try {
    const { command, rest } = find(argv)
    const { values, switches, positionals } = parseInvocation(command, rest)
    const actor = { kind: 'cli', osUser: osUser(env) } as const
    return await command.run({ values, switches, positionals, config, io, actor, database: database(config) })
  } catch (e) {
    io.err(`studio: ${(e as Error).message}`)
    if (e instanceof NewerDatabaseError || e instanceof Refused) return 2
    if (!(e instanceof UsageError)) return 1
    io.err(USAGE)
    return 2
  }
}

// The operating-system user running the command (its login name; USER when the system has none for this uid).
function osUser(env: Record<string, string | undefined>): string {
  try {
    return userInfo().username
  } catch {
    return env.USER ?? env.LOGNAME ?? 'unknown'
  }
}

function database(config: Config): Invocation['database'] {
  return async (fn, options) => {
    const db = await openDatabase({ ...config, STUDIO_DB_POOL: 1 })
    try {
      if (options?.migrate !== false) await migrate(db.sql)
      await fn(db.sql)
      return 0
    } finally {
      await db.close()
    }
  }
}
