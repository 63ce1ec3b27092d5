import { readFileSync } from 'node:fs'
import { createKey, listKeys, ROTATE_GRACE_SECONDS, revokeKey, rotateKey } from '../accounts/key-lifecycle.js'
import { parseThankYou, setKeyForm } from '../accounts/key-form.js'
import { isCaptchaProvider, minScoreRefusal, secretRefusal, setKeyCaptcha } from '../accounts/key-captcha.js'
import { bodyRefusal, replyToRefusal, setKeyAutoreply, subjectRefusal } from '../accounts/key-autoreply.js'
import { setKeyLimits } from '../accounts/key-limits.js'
import { setKeyBudget } from '../accounts/key-budget.js'
import { usd } from '../ops/usd.js'
import { narrowScopes } from '../accounts/scopes.js'
import { Email, Plan, Role } from '../api/schemas.js'
import { Refused } from '../ops/refused.js'
import { budgetArg, check, duration, expiry, limitsArg, originsArg, prefixArg, scopesArg } from './arguments.js'
import { type Command, UsageError } from './command.js'
import { printKey, printTable } from './print.js'

const shown = (n: number | null) => (n === null ? 'none' : String(n))

// The `studio keys …` commands, in the order of the help.
export const keyCommands: Command[] = [
  {
    name: 'keys create',
    args:
      '--email E [--name N] [--role R] [--plan P] [--expires-in D] [--key-name K] [--scopes S] [--origins O] ' +
      '[--rate-limit N] [--monthly-completions N] [--models M] [--budget USD] [--tokens-per-minute N]',
    help:
      "create (or reuse) the user E and its account, and print a new key for it;\n--plan also sets the account's " +
      'plan; the key is alone on the last line;\n--expires-in makes the key stop working after D; ' +
      '--key-name names the key;\n--scopes limits what it may do to the scopes S (comma-separated; default: all ' +
      'of them);\n--origins: web pages of O (comma-separated https://host[:port]; http for loopback) may use\nit ' +
      'from their script, if its only scope is leads:write;\n' +
      '--rate-limit and --monthly-completions give the key limits of its own (requests a minute,\ncompletions a ' +
      "month; the lower of its and the account's applies);\n--models limits the model aliases it may call to M " +
      '(comma-separated, among primary, fast\nand STUDIO_MODEL_ALIASES; default: all);\n--budget gives it a ' +
      'monthly budget in USD (5.00); --tokens-per-minute caps its input plus\noutput tokens in any 60 s',
    also: [
      {
        args:
          '--plan P [--expires-in D] [--scopes S] [--rate-limit N] [--monthly-completions N] [--models M] ' +
          '[--budget USD] [--tokens-per-minute N]',
        help: 'create an account with plan P and a key with no user',
        manual: 'a new account on plan P with a key that has no user (`GET /me` answers `user: null`)',
      },
    ],
    manual:
      "create or reuse the user E (`--name`: the user's name) and its account; print a new key, alone on " +
      "the last line of stdout. `--plan` also sets the account's plan; `--expires-in` makes the key stop " +
      'working after D; `--key-name` names the key (shown by `keys list` and the dashboard); `--scopes` ' +
      'limits what it may do (comma-separated, e.g. `leads:write,me:read`; default: every scope; see "Keys ' +
      'and scopes"); `--origins` lets web pages of those origins use the key from their own script ' +
      '(comma-separated `https://example.com,https://www.example.com:8443`; see "Lead keys for web ' +
      'pages"): only with `--scopes leads:write`, else one line and exit 2; `--rate-limit` and ' +
      '`--monthly-completions` give the key limits of its own, `--models` the model aliases it may call ' +
      '(comma-separated; default `all`), `--budget` its monthly budget in USD (`5.00`; see docs/spend.md), ' +
      '`--tokens-per-minute` its input plus output tokens in any rolling 60 s (see "Per-key limits"); a bad ' +
      'value is refused as by `keys limit` (exit 2, one line) and no key is made. All of them are set in ' +
      "the key's creation, in one audit entry",
    run: ({ values, config, io, actor, database }) => {
      if (!values.email && (values.name !== undefined || values.role !== undefined))
        throw new UsageError('--name and --role need --email')
      if (!values.email && !values.plan) throw new UsageError('keys create needs --email or --plan')
      const limits = limitsArg({ values, config })
      const budgetMicros = budgetArg(values.budget)
      const input = {
        email: values.email === undefined ? undefined : check(Email, values.email, '--email'),
        name: values.name,
        role: values.role === undefined ? undefined : check(Role, values.role, '--role'),
        plan: values.plan === undefined ? undefined : check(Plan, values.plan, '--plan'),
        expiresAt: expiry(values['expires-in']),
        keyName: values['key-name'],
        scopes: values.scopes === undefined ? undefined : scopesArg(values.scopes),
        origins: values.origins === undefined ? undefined : originsArg(values.origins, values.scopes),
        limits,
        budgetMicros,
      }
      return database(async (sql) => printKey(io, await createKey(sql, input, actor), input.email))
    },
  },
  {
    name: 'keys list',
    help:
      'list keys: prefix, name, account, plan, user, created, last used, expires, revoked, scopes,\nrate limit, ' +
      'monthly completions cap, models, monthly budget in USD and tokens per minute\n(`-`: none of its own; for ' +
      'models, every alias)',
    manual:
      'prefix, name, account, plan, user, created, last used, expires, revoked, scopes (by name, ' +
      "comma-separated), the key's own rate limit, monthly completions cap, models, monthly budget in USD " +
      '(`5.000000`) and tokens per minute (`-`: none; for models, every alias) — never a secret',
    run: ({ io, database }) =>
      database(async (sql) => {
        const iso = (d: Date | null) => (d ? d.toISOString() : '-')
        printTable(
          io,
          ['PREFIX', 'NAME', 'ACCOUNT', 'PLAN', 'USER', 'CREATED', 'LAST_USED', 'EXPIRES', 'REVOKED', 'SCOPES'].concat([
            'RATE_LIMIT',
            'MONTHLY_COMPLETIONS',
            'MODELS',
            'BUDGET_USD',
            'TOKENS_PER_MINUTE',
          ]),
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
            r.rate_limit ?? '-',
            r.monthly_completions ?? '-',
            r.models?.join(',') ?? '-',
            r.budget_micros === null ? '-' : usd(r.budget_micros),
            r.tokens_per_minute ?? '-',
          ])
        )
      }),
  },
  {
    name: 'keys rotate',
    args: 'PREFIX [--grace D] [--expires-in D]',
    help:
      'a new key for the same account and user, alone on the last line; the old key\nkeeps working for the grace ' +
      `period D (default ${ROTATE_GRACE_SECONDS / 3600}h; 0: stops at once)`,
    manual:
      'a new key for the same account and user, alone on the last line of stdout; the old key keeps working for ' +
      `the grace D (default \`${ROTATE_GRACE_SECONDS / 3600}h\`; \`0\`: it stops at once; never longer than it would ` +
      'have anyway). A revoked key cannot be rotated. `--expires-in` applies to the new key',
    run: ({ values, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      const grace = values.grace === undefined ? ROTATE_GRACE_SECONDS : duration(values.grace, '--grace', true)
      const expiresAt = expiry(values['expires-in']) ?? null
      return database(async (sql) => {
        const k = await rotateKey(sql, { prefix, graceSeconds: grace, expiresAt, actor })
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
    manual: 'revoke a key; running servers refuse it within a second',
    run: ({ positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      return database(async (sql) => {
        if (!(await revokeKey(sql, prefix, actor))) throw new Error(`no key with prefix ${prefix}`)
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
    manual:
      "narrow the key's scopes to S, which must be among those it has: a wider set is refused with exit 2 " +
      'and one line, and nothing changes; an unknown scope name is exit 2 too. Running servers apply it ' +
      'within a second. A rotated key keeps its scopes',
    run: ({ values, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      if (values.scopes === undefined) throw new UsageError('keys scopes needs --scopes')
      const scopes = scopesArg(values.scopes)
      let code = 0
      return database(async (sql) => {
        const r = await narrowScopes(sql, { prefix, scopes, actor })
        if (!r.ok && r.reason === 'not_found') throw new Error(`no key with prefix ${prefix}`)
        if (r.ok) return io.out(`key ${prefix} now has the scopes ${r.after.join(',')}`)
        io.err(`studio: key ${prefix} lacks ${r.added.join(', ')}: scopes can be narrowed, never widened`)
        code = 2
      }).then((done) => done || code)
    },
  },
  {
    name: 'keys limit',
    args:
      'PREFIX [--rate-limit N|none] [--monthly-completions N|none] [--models M|all] [--budget USD|none] ' +
      '[--tokens-per-minute N|none]',
    help:
      "set or lift (none) the key's own rate limit (requests in any 60 s) and monthly\ncompletions cap; the lower " +
      "of the key's and the account's applies; --models limits the\nmodel aliases it may call to M (comma-separated) " +
      "or lifts that limit (all);\n--budget sets the key's monthly budget in USD (5.00) or lifts it (none);\n" +
      '--tokens-per-minute caps its input plus output tokens in any 60 s;\n' +
      'running servers apply it within a second',
    manual:
      "set the key's own rate limit (requests in any 60 s, at least 1) or monthly completions cap (at " +
      'least 0), or lift it (`none`); set the model aliases it may call (`--models fast,primary`) or lift ' +
      'that limit (`all`); set its tokens per minute (input plus output tokens in any rolling 60 s, cache ' +
      'reads not counted, at least 1) or lift it (`none`); a flag not given stays as it was. No flag, a value ' +
      'that is not a whole number or `none`, or a model alias the configuration does not name, is refused with ' +
      'exit 2 and one line, and nothing changes. Running servers apply it within a second; a rotated key keeps ' +
      'its limits (see "Per-key limits" and docs/spend.md). `--budget 5.00` sets the monthly budget in USD of ' +
      'the key and the keys it replaced by rotation (`none` lifts it): calls that do not fit it are refused with ' +
      '`budget_exceeded` (see docs/spend.md)',
    run: ({ values, config, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      const limits = limitsArg({ values, config })
      const budget = budgetArg(values.budget)
      if (!Object.keys(limits).length && budget === undefined)
        throw new Refused(
          'keys limit needs --rate-limit N|none or --monthly-completions N|none or --models M|all or --budget ' +
            'USD|none or --tokens-per-minute N|none'
        )
      return database(async (sql) => {
        // Limits and a budget given together are set in one transaction, as the Limits page sets them.
        if (Object.keys(limits).length) {
          const r = await setKeyLimits(sql, { prefix, change: limits, budget, actor })
          if (!r.ok) throw new Error(`no key with prefix ${prefix}`)
          const { rateLimit, monthlyCompletions, models, tokensPerMinute } = r.after
          const limited = `rate limit ${shown(rateLimit)}, monthly completions ${shown(monthlyCompletions)}`
          const tokens = tokensPerMinute == null ? '' : `, tokens per minute ${tokensPerMinute}`
          io.out(`key ${prefix}: ${limited}, models ${models?.join(',') ?? 'all'}${tokens}`)
        } else if (budget !== undefined) {
          const r = await setKeyBudget(sql, { prefix, micros: budget, actor })
          if (!r.ok) throw new Error(`no key with prefix ${prefix}`)
        }
        if (budget !== undefined)
          io.out(`key ${prefix}: ${budget === null ? 'no budget' : `a monthly budget of ${usd(budget)} USD`}`)
      })
    },
  },
  {
    name: 'keys form',
    args: 'PREFIX STATE [--thank-you URL]',
    help:
      'open (STATE on) or close (off) a lead key to HTML forms posting to {base}/forms/PREFIX\nfrom its origins ' +
      '(its only scope leads:write, with origins); --thank-you sends the browser\nto URL after a stored lead ' +
      "(none: the service's own thank-you page)",
    run: ({ values, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      const state = positionals[1]
      if (state !== 'on' && state !== 'off') throw new UsageError(`STATE is on or off, not ${JSON.stringify(state)}`)
      const thankYou = thankYouArg(values['thank-you'])
      return database(async (sql) => {
        const r = await setKeyForm(sql, { prefix, change: { open: state === 'on', thankYou }, actor })
        if (!r.ok && r.reason === 'not_found') throw new Error(`no key with prefix ${prefix}`)
        if (!r.ok) throw new Refused(`key ${prefix} is not a lead key: give it the only scope leads:write and origins`)
        const { open, thankYou: url } = r.after
        io.out(`key ${prefix}: forms ${open ? 'on' : 'off'}, thank-you page ${url ?? "the service's own"}`)
      })
    },
  },
  {
    name: 'keys captcha',
    args: 'PREFIX PROVIDER [--secret-file F] [--min-score N]',
    help:
      "require a CAPTCHA on a lead key's leads: PROVIDER turnstile, hcaptcha or recaptcha, with\nthe provider's " +
      'secret read from the file F (never printed again); --min-score: the lowest\nreCAPTCHA v3 score taken ' +
      '(0 to 1); PROVIDER none: no CAPTCHA',
    run: ({ values, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      const captcha = captchaArg(positionals[1], values['secret-file'], values['min-score'])
      return database(async (sql) => {
        const r = await setKeyCaptcha(sql, { prefix, captcha, actor })
        if (!r.ok && r.reason === 'not_found') throw new Error(`no key with prefix ${prefix}`)
        if (!r.ok) throw new UsageError('--secret-file is needed')
        const score = r.minScore === null ? '' : `, minimum score ${r.minScore}`
        io.out(`key ${prefix}: captcha ${r.provider ?? 'none'}${score}`)
      })
    },
  },
  {
    name: 'keys autoreply',
    args: 'PREFIX --subject S --body-file F [--reply-to ADDRESS]',
    help:
      'mail each person who sends a lead with the key (mail must be on): subject S, the\nplain-text body read ' +
      "from the file F, {{name}}, {{service}} or any field's name in\nbraces replaced by the lead's value; " +
      '--reply-to: where their reply goes',
    also: [{ args: 'PREFIX STATE', help: 'STATE off: no autoreply' }],
    run: ({ values, positionals, io, actor, database }) => {
      const prefix = prefixArg(positionals[0])
      const autoreply = autoreplyArg(positionals[1], values)
      return database(async (sql) => {
        const r = await setKeyAutoreply(sql, { prefix, autoreply, actor })
        if (!r.ok && r.reason === 'not_found') throw new Error(`no key with prefix ${prefix}`)
        if (!r.ok) throw new Refused(`key ${prefix} is not a lead key: it needs the scope leads:write`)
        const to = r.autoreply?.replyTo ? `, reply to ${r.autoreply.replyTo}` : ''
        io.out(
          `key ${prefix}: autoreply ${r.autoreply ? `on, subject ${JSON.stringify(r.autoreply.subject)}${to}` : 'off'}`
        )
      })
    },
  },
]

// `--subject S --body-file F [--reply-to ADDRESS]`, or `off` (null).
function autoreplyArg(state: string | undefined, values: Record<string, string | undefined>) {
  const { subject, 'body-file': file, 'reply-to': replyTo } = values
  if (state === 'off') {
    if (subject !== undefined || file !== undefined || replyTo !== undefined)
      throw new UsageError('off takes no --subject, --body-file or --reply-to')
    return null
  }
  if (state !== undefined) throw new UsageError(`STATE is off, not ${JSON.stringify(state)}`)
  if (subject === undefined || file === undefined) throw new UsageError('--subject and --body-file are needed (or off)')
  const subjectNo = subjectRefusal(subject)
  if (subjectNo) throw new UsageError(`--subject: ${subjectNo}`)
  let body: string
  try {
    body = readFileSync(file, 'utf8')
  } catch (e) {
    throw new UsageError(`--body-file: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  const bodyNo = bodyRefusal(body)
  if (bodyNo) throw new UsageError(`--body-file: ${bodyNo}`)
  const replyToNo = replyTo === undefined ? null : replyToRefusal(replyTo)
  if (replyToNo) throw new UsageError(`--reply-to: ${replyToNo}`)
  return { subject, body, replyTo: replyTo ?? null }
}

// `PROVIDER [--secret-file F] [--min-score N]`: the key's CAPTCHA, or null for none.
function captchaArg(provider: string | undefined, file: string | undefined, minScore: string | undefined) {
  if (provider === 'none') {
    if (file !== undefined || minScore !== undefined) throw new UsageError('none takes no --secret-file or --min-score')
    return null
  }
  if (!provider || !isCaptchaProvider(provider))
    throw new UsageError(`PROVIDER is turnstile, hcaptcha, recaptcha or none, not ${JSON.stringify(provider)}`)
  if (file === undefined) throw new UsageError('--secret-file is needed')
  let secret: string
  try {
    secret = readFileSync(file, 'utf8').trim()
  } catch (e) {
    throw new UsageError(`--secret-file: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  const refusal = secretRefusal(secret)
  if (refusal) throw new UsageError(`--secret-file: ${refusal}`)
  if (minScore !== undefined && provider !== 'recaptcha') throw new UsageError('--min-score is for recaptcha (v3)')
  const score = minScore === undefined ? null : Number(minScore)
  const scoreRefusal = score === null ? null : minScoreRefusal(score)
  if (scoreRefusal) throw new UsageError(`--min-score: ${scoreRefusal}`)
  return { provider, secret, minScore: score }
}

// `--thank-you URL|none`: undefined when not given, null for none.
function thankYouArg(text: string | undefined) {
  if (text === undefined || text === 'none') return text === undefined ? undefined : null
  const parsed = parseThankYou(text)
  if ('error' in parsed) throw new UsageError(`--thank-you: ${parsed.error}`)
  return parsed.url
}
