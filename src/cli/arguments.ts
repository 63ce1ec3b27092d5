import * as v from 'valibot'
import { isPrefix } from '../accounts/key-format.js'
import { originsRefusal, parseOrigins } from '../accounts/origins.js'
import { type KeyLimits, LIMIT_MIN, parseLimit, parseModels } from '../accounts/key-limits.js'
import { parseScopes, SCOPES, type Scope, scopeList } from '../accounts/scopes.js'
import { parseUsd } from '../accounts/budget-set.js'
import { parseDuration } from '../ops/duration.js'
import { configuredAliases } from '../ops/model-aliases.js'
import { Refused } from '../ops/refused.js'
import { type Invocation, UsageError } from './command.js'

// Checks of single command-line arguments; each failure names the argument: a UsageError (the usage line follows),
// or a Refused (one line) for --origins and the limits.

export function check<S extends v.GenericSchema>(schema: S, value: unknown, what: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value)
  if (!r.success) throw new UsageError(`${what}: ${r.issues[0].message}`)
  return r.output
}

export function duration(text: string, what: string, allowZero: boolean): number {
  const seconds = parseDuration(text)
  if (seconds === null || (seconds === 0 && !allowZero))
    throw new UsageError(`${what}: not a duration like 90d, 24h, 30m or 45s${allowZero ? ' (or 0)' : ''}`)
  return seconds
}

export const expiry = (text: string | undefined) =>
  text === undefined ? undefined : new Date(Date.now() + 1000 * duration(text, '--expires-in', false))

export function prefixArg(prefix: string) {
  if (!isPrefix(prefix)) throw new UsageError(`not a key prefix: ${JSON.stringify(prefix.slice(0, 40))}`)
  return prefix
}

// `--scopes me:read,leads:write`: known scope names, at least one.
export function scopesArg(text: string): Scope[] {
  const parsed = parseScopes(scopeList(text))
  if ('scopes' in parsed) return parsed.scopes
  const what = parsed.unknown.length ? `unknown scope ${parsed.unknown.join(', ')}` : 'no scope named'
  throw new UsageError(`--scopes: ${what}; expected a comma-separated list of ${SCOPES.join(', ')}`)
}

// `--origins https://example.com,https://www.example.com`: web origins, at least one, for a key whose `--scopes` is
// leads:write alone (a key with any other scope, or every scope by default, is refused).
export function originsArg(text: string, scopes: string | undefined): string[] {
  const parsed = parseOrigins(text)
  if ('error' in parsed) throw new UsageError(`--origins: ${parsed.error}`)
  const refused = originsRefusal(scopes === undefined ? SCOPES : scopesArg(scopes))
  if (refused) throw new Refused(`--origins: ${refused}; make it with --scopes leads:write`)
  return parsed.origins
}

// `--rate-limit N`, `--monthly-completions N` and `--tokens-per-minute N` (N a whole number, or `none`), `--models A,B` (model aliases, or
// `all`): the limits they name; a value that is neither is refused (one line, exit 2, and nothing changes). The
// aliases are checked against the ones this process's configuration names (STUDIO_MODEL_ALIASES: run the command
// with the server's settings).
export function limitsArg({ values, config }: Pick<Invocation, 'values' | 'config'>): Partial<KeyLimits> {
  const limits: Partial<KeyLimits> = {}
  for (const [flag, name] of [
    ['rate-limit', 'rateLimit'],
    ['monthly-completions', 'monthlyCompletions'],
    ['tokens-per-minute', 'tokensPerMinute'],
  ] as const) {
    const text = values[flag]
    if (text === undefined) continue
    const n = parseLimit(text, LIMIT_MIN[name])
    if (n === undefined) throw new Refused(`--${flag}: expected a whole number of at least ${LIMIT_MIN[name]}, or none`)
    limits[name] = n
  }
  if (values.models !== undefined) {
    const models = parseModels(values.models.split(','), configuredAliases(config))
    if (typeof models === 'string') throw new Refused(`--models: ${models}`)
    limits.models = models
  }
  return limits
}

// `--budget 5.00` (USD, to the micro-dollar) → micro-dollars, `none` → null; undefined when the flag is not given.
export function budgetArg(text: string | undefined): number | null | undefined {
  if (text === undefined) return undefined
  if (text.trim().toLowerCase() === 'none') return null
  const micros = parseUsd(text.trim())
  if (micros === null)
    throw new Refused(`--budget: ${JSON.stringify(text.slice(0, 40))} is not an amount in USD (5.00) or none`)
  return micros
}
