import { SCOPES } from '../accounts/scopes.js'
import { Plan, Role } from '../api/schemas.js'
import { settings } from '../ops/config.js'
import { type Command, usageForms } from './command.js'

const COLUMN = 28

// The usage line and the help text, both generated from the command table.
export function usageLine(commands: Command[]): string {
  const forms = commands.flatMap((c) => usageForms(c).map((f) => f.form))
  return `usage: studio [${forms.join(' | ')}] [--help]`
}

function commandLines(commands: Command[]): string[] {
  const indent = ' '.repeat(COLUMN + 3)
  return commands.flatMap(usageForms).flatMap(({ form, help }) => {
    const [first, ...more] = help.split('\n')
    const head = form.length <= COLUMN ? [`  ${form.padEnd(COLUMN)} ${first}`] : [`  ${form}`, `${indent}${first}`]
    return [...head, ...more.map((line) => `${indent}${line}`)]
  })
}

// What the help says of the arguments, and the exit codes; docs/cli.md says the same.
export const ARGUMENT_NOTES = [
  `Roles: ${Role.options.join(', ')} (default owner).`,
  `Scopes S: ${SCOPES.join(', ')} (comma-separated; a key has all of them unless made with fewer).`,
  'Durations D: a whole number and a unit, s, m, h or d: 90d, 24h, 30m.',
]
export const EXIT_CODES =
  'Exit codes: 0 done, 1 failed, 2 bad arguments or configuration, a database migrated by a newer release, or a\n' +
  'refusal (a restore into a database that is not empty, no pg_dump for a backup of PostgreSQL).'

export function helpText(commands: Command[]): string {
  const environment = Object.entries(settings).map(
    ([name, s]) => `  ${name.padEnd(COLUMN)} ${s.doc}${'default' in s ? ` [${s.default}]` : ''}`
  )
  return `Studio API: the Studio Public REST API over PostgreSQL.

${usageLine(commands)}

Commands:
${commandLines(commands).join('\n')}

${ARGUMENT_NOTES.join('\n')}

Environment (defaults in brackets):
${environment.join('\n')}

${EXIT_CODES}`
}

// For the `plan set` help line.
export const PLANS = Plan.options.join(', ')
