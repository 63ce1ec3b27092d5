import { accountOfUser } from '../accounts/key-lifecycle.js'
import { Email } from '../api/schemas.js'
import { actorLabel, auditCursor } from '../audit/log.js'
import { check } from './arguments.js'
import { type Command, UsageError } from './command.js'

const DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/

// --since: a UTC date (2026-01-31) or a time with its offset (2026-01-31T09:00Z, …+01:00).
function since(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined
  const d = new Date(text)
  if (!DATE.test(text) || Number.isNaN(d.getTime()))
    throw new UsageError('--since: expected a date like 2026-01-31 or a time like 2026-01-31T09:00Z')
  return d
}

const json = (v: Record<string, unknown> | null) => (v ? JSON.stringify(v) : '-')
// A cell on one line: control characters (a tab, a newline, a terminal's escape in a typed email) become spaces.
const cell = (s: string) => s.replace(/\p{Cc}/gu, ' ')

export const auditCommand: Command = {
  name: 'audit',
  args: '[--email E] [--since DATE]',
  help:
    "the audit log, oldest first (of E's account; since DATE, a UTC day or a time):\ntime, account, actor, " +
    'action, target, client address, values before and after',
  manual:
    'the audit log (see "Audit log"), oldest first, tab-separated after a header line: time, account ' +
    '(`-`: none), actor (an email, or `cli (osuser)`), action, target, client address, values before and ' +
    "after (JSON, `-` when none); `--email` keeps E's account's entries, `--since` those from a UTC day " +
    '(`2026-01-31`) or a time (`2026-01-31T09:00Z`) on',
  run: ({ values, io, database }) => {
    const email = values.email === undefined ? undefined : check(Email, values.email, '--email')
    const from = since(values.since)
    return database(async (sql) => {
      const accountId = email === undefined ? undefined : await accountOfUser(sql, email)
      if (accountId === null) throw new Error(`no user with email ${email}`)
      io.out(['TIME', 'ACCOUNT', 'ACTOR', 'ACTION', 'TARGET', 'ADDRESS', 'BEFORE', 'AFTER'].join('\t'))
      for await (const rows of auditCursor(sql, { accountId, since: from }, 'asc'))
        for (const r of rows) {
          const cells = [r.at.toISOString(), r.account_id ?? '-', actorLabel(r), r.action, r.target ?? '-']
          io.out([...cells, r.address ?? '-', json(r.before), json(r.after)].map(cell).join('\t'))
        }
    })
  },
}
