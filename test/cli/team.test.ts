import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

// studio team invite over a real database and server: the printed link signs the new user in to the account.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const env = { ...dbEnv, STUDIO_PUBLIC_URL: server.url }

async function cli(args: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await run(['team', 'invite', ...args], env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out, err }
}

const owner = await signInWithLink(server.url, await signinLink(dbEnv, env, ['--email', 'owner@example.com']))
await signinLink(dbEnv, env, ['--email', 'elsewhere@example.com'])

t.test('invite prints a sign-in link; the user signs in to the account with the role given', async (t) => {
  const invite = await cli(['--account-email', 'owner@example.com', '--email', 'new@example.com', '--role', 'admin'])
  t.equal(invite.code, 0, invite.err.join('\n'))
  t.match(invite.out[0], /^user [\da-f-]{36} <new@example\.com> in account [\da-f-]{36}: open this link/)
  const link = invite.out.at(-1) as string
  t.match(link, `${server.url}/dashboard/link/`)
  const invited = await signInWithLink(server.url, link)
  t.match((await invited.get('/dashboard/keys')).text, 'new@example.com · admin')
  const team = await owner.get('/dashboard/team')
  t.match(team.text, '<td>new@example.com</td>', 'on the Team page')
  t.match((await owner.get('/dashboard/audit')).text, 'member.invited')
})

t.test('inviting a user of the account again prints a new link for the same user', async (t) => {
  const first = await cli(['--account-email', 'owner@example.com', '--email', 'again@example.com'])
  const second = await cli(['--account-email', 'owner@example.com', '--email', 'AGAIN@example.com'])
  t.equal(second.code, 0)
  t.equal(second.out[0].split(' ')[1], first.out[0].split(' ')[1], 'the same user')
  t.not(second.out.at(-1), first.out.at(-1), 'a new link')
  t.match((await owner.get('/dashboard/team')).text, '<td>again@example.com</td>')
})

t.test('errors: one line, exit 2 for bad arguments, 1 for a refused invitation', async (t) => {
  const cases: [string[], number, RegExp][] = [
    [['--email', 'x@example.com'], 2, /needs --account-email/],
    [['--account-email', 'owner@example.com'], 2, /needs --email/],
    [['--account-email', 'owner@example.com', '--email', 'not-an-email'], 2, /--email/],
    [['--account-email', 'owner@example.com', '--email', 'x@example.com', '--role', 'boss'], 2, /--role/],
    [['--account-email', 'nobody@example.com', '--email', 'x@example.com'], 1, /no user with email nobody@/],
    [['--account-email', 'owner@example.com', '--email', 'elsewhere@example.com'], 1, /belongs to another account/],
  ]
  for (const [args, code, message] of cases) {
    const r = await cli(args)
    t.equal(r.code, code, args.join(' '))
    t.match(r.err[0], message)
    t.notMatch(r.err.join('\n'), /\n\s+at /, 'no stack trace')
    t.equal(r.out.length, 0, 'no link')
  }
})
