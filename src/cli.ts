import { parseArgs, type ParseArgsConfig } from 'node:util'
import * as v from 'valibot'
import { createKey, listKeys, revokeKey, setPlan } from './accounts.js'
import { ConfigError, parseConfig, settings, type Config } from './config.js'
import { openDatabase } from './db.js'
import { isPrefix } from './keys.js'
import { createLogger } from './log.js'
import { migrate } from './migrate.js'
import { Plan, Role } from './schemas.js'
import { startService } from './server.js'

export const USAGE = `usage: studio [serve | migrate | keys create --email E [--name N] [--role R] [--plan P] | keys create --plan P | keys list | keys revoke PREFIX | plan set --email E PLAN] [--help]`

export const HELP = `Studio API: the Studio Public REST API over PostgreSQL.

${USAGE}

Commands:
  serve                        serve the API (the default command)
  migrate                      apply pending database migrations and exit
  keys create --email E [--name N] [--role R] [--plan P]
                               create (or reuse) the user E and its account, and print a new key for it;
                               --plan also sets the account's plan; the key is alone on the last line
  keys create --plan P         create an account with plan P and a key with no user
  keys list                    list keys: prefix, account, plan, user, created, last used, expires, revoked
  keys revoke PREFIX           revoke a key (running servers stop accepting it within a second)
  plan set --email E PLAN      set the plan of E's account: ${Plan.options.join(', ')}

Roles: ${Role.options.join(', ')} (default owner).

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

const stdio: Io = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') }

function check<S extends v.GenericSchema>(schema: S, value: unknown, what: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value)
  if (!r.success) throw new UsageError(`${what}: ${r.issues[0].message}`)
  return r.output
}

const email = v.pipe(v.string(), v.email('must be an email address'))

function parse(argv: string[], options: ParseArgsConfig['options'], positionals = 0) {
  try {
    const r = parseArgs({ args: argv, options, allowPositionals: positionals > 0, strict: true })
    if (r.positionals.length !== positionals) throw new UsageError(`expected ${positionals} argument(s), got ${r.positionals.length}`)
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
      return await serve(config)
    }
    if (cmd === 'migrate') {
      parse(argv.slice(1), {})
      return await withDb(config, async (sql) => {
        const applied = await migrate(sql)
        io.out(applied.length ? `applied: ${applied.join(', ')}` : 'up to date')
      })
    }
    if (cmd === 'keys' && sub === 'create') {
      const { values } = parse(rest, { email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, plan: { type: 'string' } })
      if (!values.email && (values.name !== undefined || values.role !== undefined)) throw new UsageError('--name and --role need --email')
      if (!values.email && !values.plan) throw new UsageError('keys create needs --email or --plan')
      const input = {
        email: values.email === undefined ? undefined : check(email, values.email, '--email'),
        name: values.name,
        role: values.role === undefined ? undefined : check(Role, values.role, '--role'),
        plan: values.plan === undefined ? undefined : check(Plan, values.plan, '--plan'),
      }
      return await withDb(config, async (sql) => {
        await migrate(sql)
        const k = await createKey(sql, input)
        io.out(`account ${k.accountId} (plan ${k.plan})${k.userId ? `, user ${k.userId} <${input.email}>` : ', no user'}`)
        io.out(`key ${k.prefix} created; it is shown once, store it now:`)
        io.out(k.key)
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
          io.out([r.prefix, r.account_id, r.plan, r.email ?? '-', iso(r.created_at), iso(r.last_used_at), iso(r.expires_at), iso(r.revoked_at)].join('\t'))
        }
      })
    }
    if (cmd === 'keys' && sub === 'revoke') {
      const { positionals } = parse(rest, {}, 1)
      const prefix = positionals[0]
      if (!isPrefix(prefix)) throw new UsageError(`not a key prefix: ${JSON.stringify(prefix.slice(0, 40))}`)
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

  async function withDb(config: Config, fn: (sql: import('./db.js').Sql) => Promise<void>): Promise<number> {
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
  const service = await startService(config, { log })
  return new Promise((done) => {
    const stop = (signal: string) => {
      log.info('shutting down', { signal })
      service.close().then(
        () => done(0),
        (e) => (log.error('shutdown failed', {}, e), done(1))
      )
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
}
