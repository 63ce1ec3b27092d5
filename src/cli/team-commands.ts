import { accountOfUser } from '../accounts/key-lifecycle.js'
import { createSigninLink, newSigninLink } from '../accounts/signin-links.js'
import { inviteMember, TeamError } from '../accounts/team.js'
import { Email, Role } from '../api/schemas.js'
import { linkMail } from '../dashboard/mail.js'
import { baseUrl } from '../ops/listen.js'
import { check } from './arguments.js'
import { type Command, UsageError } from './command.js'

// `studio team invite`: what the Team page's "Invite someone" does, from a shell.
export const teamCommands: Command[] = [
  {
    name: 'team invite',
    args: '--account-email E --email U [--role R]',
    help:
      "add the user U to E's account (role member unless R) and print a one-time sign-in link\nfor them " +
      '(valid 24 h), alone on the last line; with mail on, an invitation with it to U is queued',
    manual:
      "add the user U to the account of the user E, as the dashboard's Team page does (role `member` unless " +
      '`--role owner|admin|member`; U already in that account: the same user, role unchanged), and print a ' +
      'one-time sign-in link for U, alone on the last line of stdout: valid 24 hours, single use. With mail on ' +
      'an invitation with it is also mailed to U. A U that belongs to another account is refused (exit 1)',
    run: ({ values, io, config, actor, database }) => {
      if (!values['account-email']) throw new UsageError('team invite needs --account-email')
      if (!values.email) throw new UsageError('team invite needs --email')
      const owner = check(Email, values['account-email'], '--account-email')
      const email = check(Email, values.email, '--email')
      const role = values.role === undefined ? 'member' : check(Role, values.role, '--role')
      const base = config.STUDIO_PUBLIC_URL ?? baseUrl(config.HOST, config.PORT)
      return database(async (sql) => {
        const accountId = await accountOfUser(sql, owner)
        if (!accountId) throw new Error(`no user with email ${owner}`)
        const userId = await inviteMember(sql, accountId, email, role, actor).catch((e: unknown) => {
          throw e instanceof TeamError ? new Error(`${email}: ${e.message}`) : e
        })
        const link = newSigninLink(base)
        const mail = linkMail({ config }, link.url, { by: owner, role })
        const made = await createSigninLink(sql, { userId, link, mail, actor })
        const mailed = made.mailed ? ' (an invitation with it is queued for them: the running server sends it)' : ''
        io.out(`user ${userId} <${email}> in account ${accountId}: open this link within 24 hours to sign in${mailed}:`)
        io.out(made.url)
      })
    },
  },
]
