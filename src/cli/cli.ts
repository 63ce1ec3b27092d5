import { parseArgs, type ParseArgsConfig } from 'node:util'
import * as v from 'valibot'
import { createKey, listKeys, revokeKey, rotateKey, setPlan, type CreatedKey } from '../accounts/accounts.js'
import { ConfigError, parseConfig, settings, type Config } from '../ops/config.js'
import { openDatabase } from '../storage/db.js'
import { parseDuration } from '../ops/duration.js'
import { healthcheck } from '../ops/healthcheck.js'
import { isPrefix } from '../accounts/keys.js'
import { createLogger } from '../ops/log.js'
import { migrate } from '../storage/migrate.js'
import { Plan, Role } from '../api/schemas.js'
import { startService } from '../service.js'
import { usageMonth, usageByAccount } from '../accounts/usage.js'
import { isPrimary, runPrimary, workersProblem } from './workers.js'

export const USAGE = `usage: studio [serve | migrate | healthcheck | keys create --email E [--name N] [--role R] [--plan P] [--expires-in D] | keys create --plan P [--expires-in D] | keys list | keys rotate PREFIX [--grace D] [--expires-in D] | keys revoke PREFIX | plan set --email E PLAN | usage [--month YYYY-MM]] [--help]`

export const HELP = `Studio API: the Studio Public REST API over PostgreSQL.

${USAGE}

Commands:
  serve                        serve the API (the default command)
  migrate                      apply pending database migrations and exit
  healthcheck                  exit 0 if the server at HOST:PORT answers GET /healthz, else 1 (for containers)
  keys create --email E [--name N] [--role R] [--plan P] [--expires-in D]
                               create (or reuse) the user E and its account, and print a new key for it;
                               --plan also sets the account's plan; the key is alone on the last line;
                               --expires-in makes the key stop working after D
  keys create --plan P [--expires-in D]
                               create an account with plan P and a key with no user
  keys list                    list keys: prefix, account, plan, user, created, last used, expires, revoked
  keys rotate PREFIX [--grace D] [--expires-in D]
                               a new key for the same account and user, alone on the last line; the old key
                               keeps working for the grace period D (default 24h; 0: stops at once)
  keys revoke PREFIX           revoke a key (running servers stop accepting it within a second)
  plan set --email E PLAN      set the plan of E's account: ${Plan.options.join(', ')}
  usage [--month YYYY-MM]      per account, this month (UTC) or the one named: completions answered and failed,
                               input and output tokens, quota used, limit and left

Roles: ${Role.options.join(', ')} (default owner).
Durations D: a whole number and a unit, s, m, h or d: 90d, 24h, 30m.

Environment (defaults in brackets):
${Object.entries(settings)
  .map(([name, s]) => `  ${name.padEnd(28)} ${s.doc}${'default' in s ? ` [${s.default}]` : ''}`)
  .join('\n')}

Exit codes: 0 done, 1 failed, 2 bad arguments or configuration.`

export class UsageError extends Error {}

export interface Io {
  out: (line: string) => void
  err: (line: string) => void
}

const stdio: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) }

function check<S extends v.GenericSchema>(schema: S, value: unknown, what: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value)
  if (!r.success) throw new UsageError(`${what}: ${r.issues[0].message}`)
  return r.output
}

const email = v.pipe(v.string(), v.email('must be an email address'))

function duration(text: string, what: string, allowZero: boolean): number {
  const seconds = parseDuration(text)
  if (seconds === null || (seconds === 0 && !allowZero))
    throw new UsageError(`${what}: not a duration like 90d, 24h, 30m or 45s${allowZero ? ' (or 0)' : ''}`)
  return seconds
}

const expiry = (text: string | undefined) =>
  text === undefined ? undefined : new Date(Date.now() + 1000 * duration(text, '--expires-in', false))

function printKey(io: Io, k: CreatedKey, email: string | null | undefined) {
  io.out(`account ${k.accountId} (plan ${k.plan})${k.userId ? `, user ${k.userId} <${email}>` : ', no user'}`)
  io.out(
    `key ${k.prefix} created${k.expiresAt ? `, expires ${k.expiresAt.toISOString()}` : ''}; it is shown once, store it now:`
  )
  io.out(k.key)
}

function prefixArg(prefix: string) {
  if (!isPrefix(prefix)) throw new UsageError(`not a key prefix: ${JSON.stringify(prefix.slice(0, 40))}`)
  return prefix
}

function parse(argv: string[], options: ParseArgsConfig['options'], positionals = 0) {
  try {
    const r = parseArgs({ args: argv, options, allowPositionals: positionals > 0, strict: true })
    if (r.positionals.length !== positionals)
      throw new UsageError(`expected ${positionals} argument(s), got ${r.positionals.length}`)
    return r as { values: Record<string, string | undefined>; positionals: string[] }
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}

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
  const [cmd = 'serve', sub, ...rest] = argv
  try {
    if (cmd === 'serve') {
      parse(argv.slice(1), {})
      const problem = workersProblem(config)
      if (problem) {
        io.err(`studio: ${problem}`)
        return 2
      }
      return await serve(config)
    }
    if (cmd === 'migrate') {
      parse(argv.slice(1), {})
      return await withDb(config, async (sql) => {
        const applied = await migrate(sql)
        io.out(applied.length ? `applied: ${applied.join(', ')}` : 'up to date')
      })
    }
    if (cmd === 'healthcheck') {
      parse(argv.slice(1), {})
      const problem = await healthcheck(config)
      if (problem) io.err(`studio: unhealthy: ${problem}`)
      return problem ? 1 : 0
    }
    if (cmd === 'keys' && sub === 'create') {
      const { values } = parse(rest, {
        email: { type: 'string' },
        name: { type: 'string' },
        role: { type: 'string' },
        plan: { type: 'string' },
        'expires-in': { type: 'string' },
      })
      if (!values.email && (values.name !== undefined || values.role !== undefined))
        throw new UsageError('--name and --role need --email')
      if (!values.email && !values.plan) throw new UsageError('keys create needs --email or --plan')
      const input = {
        email: values.email === undefined ? undefined : check(email, values.email, '--email'),
        name: values.name,
        role: values.role === undefined ? undefined : check(Role, values.role, '--role'),
        plan: values.plan === undefined ? undefined : check(Plan, values.plan, '--plan'),
        expiresAt: expiry(values['expires-in']),
      }
      return await withDb(config, async (sql) => {
        await migrate(sql)
        printKey(io, await createKey(sql, input), input.email)
      })
    }
    if (cmd === 'keys' && sub === 'list') {
      parse(rest, {})
      return await withDb(config, async (sql) => {
        await migrate(sql)
        const rows = await listKeys(sql)
        const iso = (d: Date | null) => (d ? d.toISOString() : '-')
        io.out(['PREFIX', 'ACCOUNT', 'PLAN', 'USER', 'CREATED', 'LAST_USED', 'EXPIRES', 'REVOKED'].join('\t'))
        for (const r of rows) {
          io.out(
            [
              r.prefix,
              r.account_id,
              r.plan,
              r.email ?? '-',
              iso(r.created_at),
              iso(r.last_used_at),
              iso(r.expires_at),
              iso(r.revoked_at),
            ].join('\t')
          )
        }
      })
    }
    if (cmd === 'keys' && sub === 'rotate') {
      const { values, positionals } = parse(rest, { grace: { type: 'string' }, 'expires-in': { type: 'string' } }, 1)
      const prefix = prefixArg(positionals[0])
      const grace = duration(values.grace ?? '24h', '--grace', true)
      const expiresAt = expiry(values['expires-in']) ?? null
      return await withDb(config, async (sql) => {
        await migrate(sql)
        const k = await rotateKey(sql, prefix, grace, expiresAt)
        if (!k) throw new Error(`no key with prefix ${prefix}`)
        io.out(
          `key ${prefix} rotated: ${k.oldExpiresAt > k.now ? `it keeps working until ${k.oldExpiresAt.toISOString()}` : 'it no longer works'}`
        )
        printKey(io, k, k.email)
      })
    }
    if (cmd === 'keys' && sub === 'revoke') {
      const { positionals } = parse(rest, {}, 1)
      const prefix = prefixArg(positionals[0])
      return await withDb(config, async (sql) => {
        await migrate(sql)
        if (!(await revokeKey(sql, prefix))) throw new Error(`no key with prefix ${prefix}`)
        io.out(`key ${prefix} revoked`)
      })
    }
    if (cmd === 'plan' && sub === 'set') {
      const { values, positionals } = parse(rest, { email: { type: 'string' } }, 1)
      if (!values.email) throw new UsageError('plan set needs --email')
      const plan = check(Plan, positionals[0], 'PLAN')
      const address = check(email, values.email, '--email')
      return await withDb(config, async (sql) => {
        await migrate(sql)
        const account = await setPlan(sql, address, plan)
        if (!account) throw new Error(`no user with email ${address}`)
        io.out(`account ${account} is now on plan ${plan}`)
      })
    }
    if (cmd === 'usage') {
      const { values } = parse(argv.slice(1), { month: { type: 'string' } })
      const month = usageMonth(values.month ?? Date.now())
      if (!month) throw new UsageError('--month: expected YYYY-MM')
      return await withDb(config, async (sql) => {
        await migrate(sql)
        io.out(
          [
            'ACCOUNT',
            'PLAN',
            'USER',
            'COMPLETIONS',
            'FAILED',
            'INPUT_TOKENS',
            'OUTPUT_TOKENS',
            'QUOTA_USED',
            'QUOTA_LIMIT',
            'QUOTA_LEFT',
          ].join('\t')
        )
        for (const r of await usageByAccount(sql, month, config)) {
          const limit = (n: number | null) => (n === null ? 'unlimited' : String(n))
          io.out(
            [
              r.account_id,
              r.plan,
              r.email ?? '-',
              r.completions,
              r.failed,
              r.input_tokens,
              r.output_tokens,
              r.quota_used,
              limit(r.quota_limit),
              limit(r.quota_left),
            ].join('\t')
          )
        }
      })
    }
    throw new UsageError(`unknown command: ${[cmd, sub].filter(Boolean).join(' ')}`)
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`studio: ${e.message}`)
      io.err(USAGE)
      return 2
    }
    io.err(`studio: ${(e as Error).message}`)
    return 1
  }

  async function withDb(config: Config, fn: (sql: import('../storage/db.js').Sql) => Promise<void>): Promise<number> {
    const db = await openDatabase({ ...config, STUDIO_DB_POOL: 1 })
    try {
      await fn(db.sql)
      return 0
    } finally {
      await db.close()
    }
  }
}

async function serve(config: Config): Promise<number> {
  const log = createLogger(config.LOG_LEVEL)
  if (isPrimary(config)) return runPrimary(config.STUDIO_WORKERS, log)
  const service = await startService(config, { log })
  return new Promise((done) => {
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      log.info('shutting down', { signal })
      service.close().then(
        () => done(0),
        (e) => (log.error('shutdown failed', {}, e), done(1))
      )
    }
    // `on`, not `once`: a worker may get SIGTERM twice (from its primary and from systemd's whole control group).
    process.on('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
}
