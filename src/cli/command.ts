import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { Actor } from '../audit/record.js'
import type { Config } from '../ops/config.js'
import type { Sql } from '../storage/db.js'

// One row of the CLI's command table. `args` is the usage form after the name, written as the help shows it:
// `--flag X` (or `[--flag X]`, `[--by upstream]`) is a string option, a bare `[--flag]` a switch (on or absent), a
// bare upper-case word (`PREFIX`) a positional argument. The options and the number of positionals are read from it,
// so the form in the help is the form that is parsed.
export interface Command {
  name: string // one or two words: `migrate`, `keys create`
  args?: string
  help: string // '\n' starts a continuation line in the help
  manual?: string // what docs/cli.md says of it when `help` leaves something out
  also?: { args: string; help: string; manual?: string }[] // further usage forms of the same command
  run: (call: Invocation) => Promise<number>
}

export interface Io {
  out: (line: string) => void
  err: (line: string) => void
}

export interface Invocation {
  values: Record<string, string | undefined>
  switches: Record<string, boolean | undefined>
  positionals: string[]
  config: Config
  io: Io
  // Who runs the command, for the audit log: `cli` and the operating-system user.
  actor: Actor
  // Opens a one-connection pool, applies pending migrations (unless `migrate: false`), runs fn, closes the pool.
  database: (fn: (sql: Sql) => Promise<void>, options?: { migrate: false }) => Promise<number>
}

// Bad arguments: the message, the usage line, exit code 2.
export class UsageError extends Error {}

const FLAG = /--([a-z][a-z-]*)( (?!--)[A-Za-z][\w,-]*)?/g
const POSITIONAL = /(?:^|\s)(?!--)[A-Z][A-Z0-9-]*(?=\s|$)/g

function forms(command: Command): string[] {
  return [command.args ?? '', ...(command.also ?? []).map((f) => f.args)]
}

function optionsOf(command: Command): NonNullable<ParseArgsConfig['options']> {
  const flags = forms(command).flatMap((form) => [...form.matchAll(FLAG)])
  return Object.fromEntries(flags.map((m) => [m[1], { type: m[2] ? ('string' as const) : ('boolean' as const) }]))
}

// How many positional arguments each usage form takes (`leads erase ID` one, its `--email` form none).
function positionalsOf(command: Command): number[] {
  return forms(command).map((form) => form.replace(FLAG, '').match(POSITIONAL)?.length ?? 0)
}

// The command's arguments (after its name), checked against its usage form.
export function parseInvocation(command: Command, argv: string[]) {
  const positionals = positionalsOf(command)
  try {
    const allowPositionals = Math.max(...positionals) > 0
    const r = parseArgs({ args: argv, options: optionsOf(command), allowPositionals, strict: true })
    if (!positionals.includes(r.positionals.length))
      throw new UsageError(
        `expected ${[...new Set(positionals)].join(' or ')} argument(s), got ${r.positionals.length}`
      )
    const entries = Object.entries(r.values)
    return {
      values: Object.fromEntries(entries.filter(([, v]) => typeof v === 'string')) as Invocation['values'],
      switches: Object.fromEntries(entries.filter(([, v]) => typeof v === 'boolean')) as Invocation['switches'],
      positionals: r.positionals,
    }
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}

export function usageForms(command: Command): { form: string; help: string; manual?: string }[] {
  const named = (args: string) => (args ? `${command.name} ${args}` : command.name)
  return [
    { form: named(command.args ?? ''), help: command.help, manual: command.manual },
    ...(command.also ?? []).map((f) => ({ form: named(f.args), help: f.help, manual: f.manual })),
  ]
}
