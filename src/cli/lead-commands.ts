import * as v from 'valibot'
import { accountOfUser } from '../accounts/key-lifecycle.js'
import { parseRetentionDays, RETENTION_MAX_DAYS, setLeadRetention } from '../accounts/lead-retention.js'
import { Email } from '../api/schemas.js'
import { accountOfLead, eraseLeads, leadsOfPerson } from '../leads/erase.js'
import { exportPerson } from '../leads/export.js'
import { check } from './arguments.js'
import { type Command, type Invocation, UsageError } from './command.js'

const LeadId = v.pipe(v.string(), v.uuid('not a lead id'))

// `studio leads erase ID`, or every lead of a person: `--account-email E --email PERSON`.
function erase({ values, positionals: [id], io, actor, database }: Invocation) {
  const byPerson = values['account-email'] !== undefined || values.email !== undefined
  if (id !== undefined && byPerson) throw new UsageError('leads erase takes a lead id or --account-email and --email')
  if (id !== undefined) {
    const lead = check(LeadId, id, 'ID')
    return database(async (sql) => {
      const accountId = await accountOfLead(sql, lead)
      if (!accountId || !(await eraseLeads(sql, { accountId, ids: [lead], actor })).length)
        throw new Error(`no lead ${lead}`)
      io.out(`lead ${lead} erased`)
    })
  }
  if (!values['account-email'] || !values.email)
    throw new UsageError('leads erase needs ID, or --account-email and --email')
  const owner = check(Email, values['account-email'], '--account-email')
  const person = check(Email, values.email, '--email')
  return database(async (sql) => {
    const accountId = await accountOfUser(sql, owner)
    if (!accountId) throw new Error(`no user with email ${owner}`)
    const erased = await eraseLeads(sql, { accountId, ids: await leadsOfPerson(sql, accountId, person), actor })
    io.out(`${erased.length} lead${erased.length === 1 ? '' : 's'} from ${person} erased`)
  })
}

// `studio leads retention --email E --days N`, or `--keep`: how long E's account keeps its leads.
function retention({ values, switches, io, actor, database }: Invocation) {
  if (!values.email) throw new UsageError('leads retention needs --email')
  const owner = check(Email, values.email, '--email')
  if ((values.days === undefined) === !switches.keep) throw new UsageError('leads retention takes --days N or --keep')
  const days = values.days === undefined ? null : parseRetentionDays(values.days)
  if (values.days !== undefined && days === null)
    throw new UsageError(
      `--days: ${JSON.stringify(values.days.slice(0, 40))} is not a whole number of days from 1 to ${RETENTION_MAX_DAYS}`
    )
  return database(async (sql) => {
    const accountId = await accountOfUser(sql, owner)
    if (!accountId || !(await setLeadRetention(sql, accountId, days, actor)))
      throw new Error(`no user with email ${owner}`)
    io.out(
      days === null
        ? `account ${accountId} now keeps its leads`
        : `account ${accountId} now erases leads older than ${days} day${days === 1 ? '' : 's'}`
    )
  })
}

// `studio leads export --account-email E --email PERSON`: what the account holds about PERSON, as JSON on stdout.
function exportCommand({ values, io, database }: Invocation) {
  if (!values['account-email'] || !values.email) throw new UsageError('leads export needs --account-email and --email')
  const owner = check(Email, values['account-email'], '--account-email')
  const person = check(Email, values.email, '--email')
  return database(async (sql) => {
    const accountId = await accountOfUser(sql, owner)
    if (!accountId) throw new Error(`no user with email ${owner}`)
    io.out(JSON.stringify(await exportPerson(sql, accountId, person), null, 2))
  })
}

// `studio leads …`: what happens to an account's leads (src/leads/).
export const leadCommands: Command[] = [
  {
    name: 'leads erase',
    args: 'ID',
    help: 'erase a lead: its data everywhere the service keeps it (see docs/leads.md)',
    manual:
      'erase the lead `ID` from the lead, its notes, the payloads of its events, its delivery and mail logs; ' +
      'its unsent webhook deliveries and mails are cancelled, a `lead.erased` event and an audit entry are ' +
      'written (see docs/leads.md, "Erasure"); an unknown id is one line and exit 1',
    also: [
      {
        args: '--account-email E --email PERSON',
        help: "erase every lead of E's account from PERSON (any case); prints how many",
      },
    ],
    run: erase,
  },
  {
    name: 'leads retention',
    args: '--email E --days N',
    help: "erase the leads of E's account once older than N days (hourly, by the server)",
    manual:
      "erase the leads of E's account once they are older than `N` days (1 to 36500): the running server's " +
      'hourly prune erases them as `leads erase` does, in batches (see docs/leads.md, "Retention")',
    also: [{ args: '--email E --keep', help: "keep the leads of E's account (the default)" }],
    run: retention,
  },
  {
    name: 'leads export',
    args: '--account-email E --email PERSON',
    help: "print what E's account holds about PERSON (any case) as one JSON document",
    manual:
      "print everything E's account holds about PERSON (any case) as one JSON document on stdout: each lead from " +
      'that address with its notes and extra fields, its events, the webhook and mail logs made of them (see ' +
      'docs/leads.md, "Export"); no such lead: `"leads": []`',
    run: exportCommand,
  },
]
