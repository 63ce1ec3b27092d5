import { createKey, listKeys, revokeKey, rotateKey } from '../accounts/accounts.js'
import { saveUser, setPlan } from '../accounts/user-save.js'
import { recordKeyChanges } from '../events/key-events.js'
import { narrowScopes } from '../accounts/scopes.js'
import { createSigninLink } from '../accounts/signin-links.js'
import { usageByAccount, usageByUpstream, usageMonth } from '../accounts/usage.js'
import { Email, Plan, Role } from '../api/schemas.js'
import { healthcheck } from '../ops/healthcheck.js'
import { baseUrl } from '../ops/listen.js'
import { linkMailer } from '../dashboard/mail.js'
import { migrate, pendingMigrations } from '../storage/migrate.js'
import { check, duration, expiry, originsArg, prefixArg, scopesArg } from './arguments.js'
import { type Command, UsageError } from './command.js'
import { PLANS } from './help.js'
import { printKey, printTable } from './print.js'
import { serve } from './serve.js'
import { auditCommand } from './audit.js'
import { backupCommands } from './backup.js'
import { webhookCommands } from './webhooks.js'

// The `studio` commands, in the order of the help. A new command is one entry here.
export const commands: Command[] = [
  {
    name: 'serve',
    help: 'serve the API (the default command)',
    run: ({ config, io }) => serve(config, io),
  },
  {
    name: 'migrate',
    args: '[--dry-run]',
    help: 'apply pending database migrations and exit;\n--dry-run: list them, one a line, and apply nothing',
    run: ({ switches, io, database }) =>
      database(
        async (sql) => {
          if (switches['dry-run']) {
            const pending = await pendingMigrations(sql)
            io.out(pending.length ? 'would apply:' : 'up to date')
            for (const name of pending) io.out(name)
            return
          }
          const applied = await migrate(sql)
          io.out(applied.length ? `applied: ${applied.join(', ')}` : 'up to date')
        },
        { migrate: false }
      ),
  },
  {
    name: 'healthcheck',
    help: 'exit 0 if the server at HOST:PORT answers GET /healthz, else 1 (for containers)',
    run: async ({ io, config }) => {
      const problem = await healthcheck(config)
      if (problem) io.err(`studio: unhealthy: ${problem}`)
      return problem ? 1 : 0
    },
  },
  {
    name: 'keys create',
    args: '--email E [--name N] [--role R] [--plan P] [--expires-in D] [--key-name K] [--scopes S] [--origins O]',
    help:
      "create (or reuse) the user E and its account, and print a new key for it;\n--plan also sets the account's " +
      'plan; the key is alone on the last line;\n--expires-in makes the key stop working after D; ' +
      '--key-name names the key;\n--scopes limits what it may do to S, comma-separated, of me:read, ' +
      'leads:write,\ncompletions:write (default: all of them); --origins: web pages of O (comma-separated ' +
      'https://host[:port];\nhttp for loopback) may use it from their script, if its only scope is leads:write',
    also: [
      { args: '--plan P [--expires-in D] [--scopes S]', help: 'create an account with plan P and a key with no user' },
    ],
    run: ({ values, io, actor, database }) => {
      if (!values.email && (values.name !== undefined || values.role !== undefined))
        throw new UsageError('--name and --role need --email')
      if (!values.email && !values.plan) throw new UsageError('keys create needs --email or --plan')
      const input = {
        email: values.email === undefined ? undefined : check(Email, values.email, '--email'),
        name: values.name,
        role: values.role === undefined ? undefined : check(Role, values.role, '--role'),
        plan: values.plan === undefined ? undefined : check(Plan, values.plan, '--plan'),
        expiresAt: expiry(values['expires-in']),
        keyName: values['key-name'],
        scopes: values.scopes === undefined ? undefined : scopesArg(values.scopes),
        origins: values.origins === undefined ? undefined : originsArg(values.origins, values.scopes),
      }
      return database(async (sql) =>
        printKey(io, await createKey(sql, input, recordKeyChanges(null), actor), input.email)
      )
    },
  },
  {
    name: 'keys list',
    help: 'list keys: prefix, name, account, plan, user, created, last used, expires, revoked, scopes',
    run: ({ io, database }) =>
      database(async (sql) => {
        const iso = (d: Date | null) => (d ? d.toISOString() : '-')
        printTable(
          io,
          ['PREFIX', 'NAME', 'ACCOUNT', 'PLAN', 'USER', 'CREATED', 'LAST_USED', 'EXPIRES', 'REVOKED', 'SCOPES'],
          (await listKeys(sql)).map((r) => [
            r.prefix,
            r.name ?? '-',
            r.account_id,
            r.plan,
            r.email ?? '-',
            iso(r.created_at),
            iso(r.last_used_at),
            iso(r.expires_at),
            iso(r.revoked_at),
            r.scopes.join(','),
          ])
        )
      }),
  },
  {
    name: 'keys rotate',
    args: 'PREFIX [--grace D] [--expires-in D]',
    help:
      'a new key for the same account and user, alone on the last line; the old key\nkeeps working for the grace ' +
      'period D (default 24h; 0: stops at once)',
    run: ({ values, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      const grace = duration(values.grace ?? '24h', '--grace', true)
      const expiresAt = expiry(values['expires-in']) ?? null
      return database(async (sql) => {
        const k = await rotateKey(sql, prefix, grace, expiresAt, recordKeyChanges(null), actor)
        if (!k) throw new Error(`no key with prefix ${prefix}`)
        const until = k.oldExpiresAt > k.now ? `it keeps working until ${k.oldExpiresAt.toISOString()}` : null
        io.out(`key ${prefix} rotated: ${until ?? 'it no longer works'}`)
        printKey(io, k, k.email)
      })
    },
  },
  {
    name: 'keys revoke',
    args: 'PREFIX',
    help: 'revoke a key (running servers stop accepting it within a second)',
    run: ({ positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      return database(async (sql) => {
        if (!(await revokeKey(sql, prefix, recordKeyChanges(null), actor)))
          throw new Error(`no key with prefix ${prefix}`)
        io.out(`key ${prefix} revoked`)
      })
    },
  },
  {
    name: 'keys scopes',
    args: 'PREFIX --scopes S',
    help:
      'narrow what a key may do to S (comma-separated, among the scopes it has);\na wider set is refused ' +
      '(exit 2); running servers apply it within a second',
    run: ({ values, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      if (values.scopes === undefined) throw new UsageError('keys scopes needs --scopes')
      const scopes = scopesArg(values.scopes)
      let code = 0
      return database(async (sql) => {
        const r = await narrowScopes(sql, prefix, scopes, undefined, actor)
        if (!r.ok && r.reason === 'not_found') throw new Error(`no key with prefix ${prefix}`)
        if (r.ok) return io.out(`key ${prefix} now has the scopes ${r.after.join(',')}`)
        io.err(`studio: key ${prefix} lacks ${r.added.join(', ')}: scopes can be narrowed, never widened`)
        code = 2
      }).then((done) => done || code)
    },
  },
  {
    name: 'plan set',
    args: '--email E PLAN',
    help: `set the plan of E's account: ${PLANS}`,
    run: ({ values, positionals, io, actor, database }) => {
      if (!values.email) throw new UsageError('plan set needs --email')
      const plan = check(Plan, positionals[0], 'PLAN')
      const address = check(Email, values.email, '--email')
      return database(async (sql) => {
        const account = await setPlan(sql, address, plan, actor)
        if (!account) throw new Error(`no user with email ${address}`)
        io.out(`account ${account} is now on plan ${plan}`)
      })
    },
  },
  {
    name: 'signin-link',
    args: '--email E [--name N] [--role R] [--plan P]',
    help:
      'create (or reuse) the user E and its account, and print a one-time dashboard sign-in\nlink (valid 24 h; ' +
      'STUDIO_PUBLIC_URL is its base), alone on the last line; with mail on, a mail with it to E is queued',
    run: ({ values, io, config, actor, database }) => {
      if (!values.email) throw new UsageError('signin-link needs --email')
      const input = {
        email: check(Email, values.email, '--email'),
        name: values.name,
        role: values.role === undefined ? undefined : check(Role, values.role, '--role'),
        plan: values.plan === undefined ? undefined : check(Plan, values.plan, '--plan'),
      }
      const base = config.STUDIO_PUBLIC_URL ?? baseUrl(config.HOST, config.PORT)
      return database(async (sql) => {
        const { userId } = await saveUser(sql, input, actor)
        const link = await createSigninLink(sql, userId, base, linkMailer({ config }), actor)
        const mailed = link.mailed ? ' (a mail with it is queued for them: the running server sends it)' : ''
        io.out(
          `user ${userId} <${input.email}>: open this link within 24 hours to set a password and sign in${mailed}:`
        )
        io.out(link.url)
      })
    },
  },
  {
    name: 'usage',
    args: '[--month YYYY-MM] [--by upstream]',
    help:
      'per account, this month (UTC) or the one named: completions answered and failed,\ninput and output tokens, ' +
      'quota used, limit and left; --by upstream: calls sent to each upstream and failed',
    run: ({ values, io, config, database }) => {
      const month = usageMonth(values.month ?? Date.now())
      if (!month) throw new UsageError('--month: expected YYYY-MM')
      if (values.by !== undefined && values.by !== 'upstream') throw new UsageError('--by: expected upstream')
      const limit = (n: number | null) => (n === null ? 'unlimited' : String(n))
      return database(async (sql) => {
        if (values.by === 'upstream') {
          const rows = await usageByUpstream(sql, month)
          return printTable(
            io,
            ['ACCOUNT', 'UPSTREAM', 'CALLS', 'FAILED'],
            rows.map((r) => [r.account_id, r.upstream, r.calls, r.failed])
          )
        }
        printTable(
          io,
          ['ACCOUNT', 'PLAN', 'USER', 'COMPLETIONS', 'FAILED', 'INPUT_TOKENS', 'OUTPUT_TOKENS'].concat([
            'QUOTA_USED',
            'QUOTA_LIMIT',
            'QUOTA_LEFT',
          ]),
          (await usageByAccount(sql, month, config)).map((r) => [
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
          ])
        )
      })
    },
  },
  ...webhookCommands,
  auditCommand,
  ...backupCommands,
]
