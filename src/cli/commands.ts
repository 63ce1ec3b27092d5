import { saveUser, setPlan } from '../accounts/user-save.js'
import { parseUsd, setBudget } from '../accounts/budget-set.js'
import { createSigninLink, newSigninLink } from '../accounts/signin-links.js'
import { spendText, usageByAccount, usageByModel, usageByUpstream, usageMonth } from '../accounts/usage.js'
import { Email, Plan, Role } from '../api/schemas.js'
import { healthcheck } from '../ops/healthcheck.js'
import { baseUrl } from '../ops/listen.js'
import { linkMail } from '../dashboard/mail.js'
import { migrate, pendingMigrations } from '../storage/migrate.js'
import { check } from './arguments.js'
import { type Command, UsageError } from './command.js'
import { PLANS } from './help.js'
import { printTable } from './print.js'
import { keyCommands } from './key-commands.js'
import { serve } from './serve.js'
import { auditCommand } from './audit.js'
import { backupCommands } from './backup.js'
import { teamCommands } from './team-commands.js'
import { webhookCommands } from './webhook-commands.js'
import { leadCommands } from './lead-commands.js'

// The `studio` commands, in the order of the help. A new command is one entry here.
export const commands: Command[] = [
  {
    name: 'serve',
    help: 'serve the API (the default command)',
    manual:
      'serve the API (the default command); migrations are applied first. Over a database a newer release ' +
      'migrated it exits with code 2 (see "Upgrading")',
    run: ({ config, io }) => serve(config, io),
  },
  {
    name: 'migrate',
    args: '[--dry-run]',
    help: 'apply pending database migrations and exit;\n--dry-run: list them, one a line, and apply nothing',
    manual:
      'apply pending migrations (the numbered files of `sql/`, in order, each once, under an advisory lock); ' +
      '`--dry-run` prints `would apply:` and their names, one a line (or `up to date`), and changes nothing',
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
    manual: "exit 0 when the server at `HOST`:`PORT` answers `GET /healthz`, else 1 (the container's `HEALTHCHECK`)",
    run: async ({ io, config }) => {
      const problem = await healthcheck(config)
      if (problem) io.err(`studio: unhealthy: ${problem}`)
      return problem ? 1 : 0
    },
  },
  ...keyCommands,
  {
    name: 'plan set',
    args: '--email E PLAN',
    help: `set the plan of E's account: ${PLANS}`,
    manual: "set the plan of E's account: `FREE`, `STARTER`, `PRO`, `ENTERPRISE`",
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
    name: 'budget set',
    args: '--email E USD',
    help: "set the monthly budget of E's account to USD (25.00), or lift it (USD: none)",
    manual:
      "set the monthly budget of E's account in USD (`25.00`, to the micro-dollar), or lift it with `none`: calls " +
      'that do not fit what is left are refused with `budget_exceeded` (see docs/spend.md)',
    run: ({ values, positionals, io, actor, database }) => {
      if (!values.email) throw new UsageError('budget set needs --email')
      const address = check(Email, values.email, '--email')
      const text = positionals[0]
      if (text === undefined) throw new UsageError('budget set needs an amount in USD (25.00) or none')
      const micros = text === 'none' ? null : parseUsd(text)
      if (micros === null && text !== 'none')
        throw new UsageError(`budget set: ${JSON.stringify(text)} is not an amount in USD (25.00) or none`)
      return database(async (sql) => {
        const account = await setBudget(sql, address, micros, actor)
        if (!account) throw new Error(`no user with email ${address}`)
        io.out(`account ${account} now has ${micros === null ? 'no budget' : `a monthly budget of ${text} USD`}`)
      })
    },
  },
  {
    name: 'signin-link',
    args: '--email E [--name N] [--role R] [--plan P]',
    help:
      'create (or reuse) the user E and its account, and print a one-time dashboard sign-in\nlink (valid 24 h; ' +
      'STUDIO_PUBLIC_URL is its base), alone on the last line; with mail on, a mail with it to E is queued',
    manual:
      'create or reuse the user E and its account (as `keys create` does) and print a one-time dashboard ' +
      'sign-in URL, alone on the last line of stdout: valid 24 hours, single use, stored hashed. Its base ' +
      'is `STUDIO_PUBLIC_URL` (default `http://HOST:PORT`). With mail on it is also mailed to E (by the ' +
      'running server, see "Mail")',
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
        const link = newSigninLink(base)
        const made = await createSigninLink(sql, { userId, link, mail: linkMail({ config }, link.url), actor })
        const mailed = made.mailed ? ' (a mail with it is queued for them: the running server sends it)' : ''
        io.out(
          `user ${userId} <${input.email}>: open this link within 24 hours to set a password and sign in${mailed}:`
        )
        io.out(link.url)
      })
    },
  },
  ...teamCommands,
  {
    name: 'usage',
    args: '[--month YYYY-MM] [--by upstream|model]',
    help:
      'per account, this month (UTC) or the one named: completions answered and failed,\ninput and output tokens, ' +
      'cost in USD ("no price" for calls without one), quota used, limit and left;\n--by upstream: calls sent to ' +
      'each upstream, failed, and the cost of those it answered;\n--by model: completions, tokens and cost per model',
    manual:
      'per account, this calendar month (UTC) or the one named: completions answered and failed, input and ' +
      'output tokens, cost in USD (`no price` for calls without one), quota used, limit and left (tab-separated, ' +
      'with a header line); `--by upstream`: per account and upstream, the calls sent (every attempt of a fallback ' +
      'list), how many failed, and the cost of the completions it answered last (COST_USD); `--by model`: per ' +
      'account and upstream model, completions answered and failed, tokens and COST_USD',
    run: ({ values, io, config, database }) => {
      const month = usageMonth(values.month ?? Date.now())
      if (!month) throw new UsageError('--month: expected YYYY-MM')
      if (values.by !== undefined && values.by !== 'upstream' && values.by !== 'model')
        throw new UsageError('--by: expected upstream or model')
      const limit = (n: number | null) => (n === null ? 'unlimited' : String(n))
      return database(async (sql) => {
        if (values.by === 'upstream') {
          const rows = await usageByUpstream(sql, month)
          return printTable(
            io,
            ['ACCOUNT', 'UPSTREAM', 'CALLS', 'FAILED', 'COST_USD'],
            rows.map((r) => [
              r.account_id,
              r.upstream,
              r.calls,
              r.failed,
              r.completions === 0 ? '-' : spendText({ ...r, failed: 0 }),
            ])
          )
        }
        if (values.by === 'model') {
          const rows = await usageByModel(sql, month)
          return printTable(
            io,
            ['ACCOUNT', 'MODEL', 'COMPLETIONS', 'FAILED', 'INPUT_TOKENS', 'OUTPUT_TOKENS', 'COST_USD'],
            rows.map((r) => [
              r.account_id,
              r.model,
              r.completions,
              r.failed,
              r.input_tokens,
              r.output_tokens,
              spendText(r),
            ])
          )
        }
        printTable(
          io,
          ['ACCOUNT', 'PLAN', 'USER', 'COMPLETIONS', 'FAILED', 'INPUT_TOKENS', 'OUTPUT_TOKENS', 'COST_USD'].concat([
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
            spendText(r),
            r.quota_used,
            limit(r.quota_limit),
            limit(r.quota_left),
          ])
        )
      })
    },
  },
  ...webhookCommands,
  ...leadCommands,
  auditCommand,
  ...backupCommands,
]
