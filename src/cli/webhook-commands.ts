import { accountOfUser } from '../accounts/key-lifecycle.js'
import { Email } from '../api/schemas.js'
import { unansweredAs } from '../events/address.js'
import { kindLabel } from '../events/endpoint-input.js'
import {
  addEndpoint,
  disableEndpoint,
  type Endpoint,
  enableEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
} from '../events/endpoints.js'
import type { Actor } from '../audit/record.js'
import type { Sql } from '../storage/db.js'
import { check } from './arguments.js'
import { type Command, UsageError } from './command.js'
import { printTable } from './print.js'

// `studio webhooks ACTION ID`: one call on one endpoint, which answers false when there is no such endpoint.
const onEndpoint = (
  action: string,
  help: string,
  done: string,
  call: (sql: Sql, id: string, actor: Actor) => Promise<boolean>
): Command => ({
  name: `webhooks ${action}`,
  args: 'ID',
  help,
  run: ({ positionals: [id], io, actor, database }) =>
    database(async (sql) => {
      if (!(await call(sql, id, actor))) throw new Error(`no webhook endpoint ${id}`)
      io.out(`endpoint ${id} ${done}`)
    }),
})

// `studio webhooks …`: an account's webhook endpoints (src/events/), in the command table's order.
export const webhookCommands: Command[] = [
  {
    name: 'webhooks add',
    args: '--email E --url URL [--events T,T] [--description D] [--kind K]',
    help:
      "add a webhook endpoint to E's account (all event types unless --events names some);\n--kind slack: a " +
      'Slack incoming webhook, sent lead.created only, as a message;\nprints its id, then its signing secret ' +
      'alone on the last line',
    manual:
      'add a webhook endpoint to E\'s account (see "Events"): every event type, or those `--events` names ' +
      '(comma-separated); `--kind slack` makes it a Slack incoming webhook (sent `lead.created` only, as a ' +
      'message; see "Events"); prints the endpoint\'s id, then its signing secret (`whsec_…`) alone on the ' +
      'last line of stdout, shown once. The URL must be `https://` and not on a private address unless ' +
      '`STUDIO_WEBHOOKS_ALLOW_PRIVATE=true`',
    run: ({ values, io, config, actor, database }) => {
      if (!values.email || !values.url) throw new UsageError('webhooks add needs --email and --url')
      const email = check(Email, values.email, '--email')
      const events = values.events?.split(',').map((s) => s.trim())
      return database(async (sql) => {
        const accountId = await accountOfUser(sql, email)
        if (!accountId) throw new Error(`no user with email ${email}`)
        const { description, kind } = values
        const input = { accountId, url: values.url as string, events, description, kind }
        const e = await addEndpoint(sql, input, config.STUDIO_WEBHOOKS_ALLOW_PRIVATE, actor)
        io.out(`endpoint ${e.id} added; its signing secret is shown once, store it now:`)
        io.out(e.secret)
      })
    },
  },
  {
    name: 'webhooks list',
    args: '[--email E]',
    help: "webhook endpoints (of E's account): id, account, URL, events, state, last delivery's status",
    manual:
      "the webhook endpoints (of E's account), tab-separated after a header: id, account, the whole URL, " +
      "events (`all` or a list; ` (Slack)` after a Slack endpoint's), `enabled` or `disabled: why`, the " +
      "last delivery's status (`-` none yet, `no answer`, or `refused: private address` when the server " +
      'refused the address) — never the secret',
    run: ({ values, io, database }) => {
      const email = values.email === undefined ? undefined : check(Email, values.email, '--email')
      return database(async (sql) => {
        const accountId = email === undefined ? undefined : await accountOfUser(sql, email)
        if (accountId === null) throw new Error(`no user with email ${email}`)
        const last = (e: Endpoint) => (e.lastAttemptAt ? String(e.lastStatus ?? unansweredAs(e.lastAnswer)) : '-')
        printTable(
          io,
          ['ID', 'ACCOUNT', 'URL', 'EVENTS', 'STATE', 'LAST_STATUS'],
          (await listEndpoints(sql, accountId)).map((e) => [
            e.id,
            e.accountId,
            e.url,
            (e.events?.join(',') ?? 'all') + (e.kind === 'standard' ? '' : ` (${kindLabel(e.kind)})`),
            e.disabledReason === null ? 'enabled' : `disabled: ${e.disabledReason}`,
            last(e),
          ])
        )
      })
    },
  },
  {
    ...onEndpoint('remove', 'delete a webhook endpoint and its delivery log', 'removed', removeEndpoint),
    manual: 'delete a webhook endpoint with its pending deliveries and its delivery log',
  },
  {
    name: 'webhooks rotate',
    args: 'ID',
    help: 'a new signing secret, alone on the last line; the old one also signs for 24 hours',
    manual:
      'give the endpoint a new signing secret, printed alone on the last line of stdout (shown once); for ' +
      '24 hours the old one also signs',
    run: ({ positionals, io, actor, database }) =>
      database(async (sql) => {
        const rotated = await rotateSecret(sql, positionals[0], new Date(), actor)
        if (!rotated) throw new Error(`no webhook endpoint ${positionals[0]}`)
        const until = rotated.until.toISOString()
        io.out(`endpoint ${positionals[0]}: the old secret keeps signing until ${until}; the new one, shown once:`)
        io.out(rotated.secret)
      }),
  },
  {
    ...onEndpoint(
      'disable',
      'stop sending to an endpoint (its pending deliveries are cancelled)',
      'disabled',
      (sql, id, actor) => disableEndpoint(sql, id, 'disabled by hand from the command line', actor)
    ),
    manual:
      'stop sending to the endpoint and cancel its pending deliveries; `webhooks list` shows `disabled: ' +
      'disabled by hand from the command line`',
  },
  {
    ...onEndpoint(
      'enable',
      'send to a disabled endpoint again (the events made from now on)',
      'enabled',
      enableEndpoint
    ),
    manual: 'send to a disabled endpoint again: the events made from then on',
  },
]
