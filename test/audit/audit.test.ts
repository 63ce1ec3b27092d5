import t from 'tap'
import { SCOPES } from '../../src/accounts/scopes.js'
import { type AuditRow, pruneAudit } from '../../src/audit/log.js'
import { run } from '../../src/cli/cli.js'
import { Browser } from '../support/dashboard-client.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

// Every change made through the dashboard or the CLI writes its audit entries (one per thing changed) in its own
// transaction; a refused change (or one that changes nothing) writes none; no entry holds a key, a password, a token
// or a signing secret.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { dbEnv })
const env = { ...dbEnv, STUDIO_PUBLIC_URL: server.url, STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }
const { sql } = await openTestDatabase(t, dbEnv)

// Every secret the steps saw: none may appear in any entry.
const secrets: string[] = []
const keep = (s: string | undefined) => {
  if (!s) throw new Error('expected a secret')
  secrets.push(s)
  return s
}

async function cli(...args: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await run(args, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out, err, last: out.at(-1) ?? '' }
}
async function cliOk(...args: string[]) {
  const r = await cli(...args)
  if (r.code !== 0) throw new Error(`studio ${args.join(' ')} exited ${r.code}: ${r.err.join(' ')}`)
  return r
}

type Entry = AuditRow
const lastId = async () => (await sql<{ id: string }[]>`select coalesce(max(id), 0)::text as id from audit_log`)[0].id
const since = (id: string) => sql<Entry[]>`select * from audit_log where id > ${id} order by id`

const tokenOf = (link: string) => new URL(link).pathname.split('/').at(-1) ?? ''
const shown = (page: string, id: string) => new RegExp(`<code id="${id}">([^<]+)</code>`).exec(page)?.[1]
const OWNER = 'olive@example.com'
const MEMBER = 'milo@example.com'
const PASSWORD = 'correct horse battery staple'
const NEW_PASSWORD = 'another horse, another staple'
const owner = new Browser(server.url)
const state = { prefix: '', rotated: '', dashKey: '', memberId: '', endpoint: '', cliEndpoint: '', link: '' }

const memberId = (team: string, email: string) =>
  new RegExp(`for="r-([\\w-]+)">Role of ${email}<`).exec(team)?.[1] ?? ''
const dashboardPrefix = (page: string) => (shown(page, 'new-key') ?? '').split('_')[1]

// Each step: what it does, and the actions of the entries it must write, in order.
const steps: { name: string; actions: string[]; run: () => Promise<unknown>; actor?: 'cli' | 'user' }[] = [
  {
    name: 'keys create for a new user',
    actions: ['account.created', 'user.created', 'key.created'],
    run: async () => {
      const r = await cliOk('keys', 'create', '--email', OWNER, '--name', 'Olive')
      state.prefix = keep(r.last).split('_')[1]
    },
  },
  {
    name: 'keys create changing the name',
    actions: ['user.changed', 'key.created'],
    run: async () => keep((await cliOk('keys', 'create', '--email', OWNER, '--name', 'Olivia')).last),
  },
  {
    name: 'keys scopes',
    actions: ['key.scopes_narrowed'],
    run: () => cliOk('keys', 'scopes', state.prefix, '--scopes', 'me:read,leads:write'),
  },
  {
    name: 'keys limit',
    actions: ['key.limited'],
    run: () => cliOk('keys', 'limit', state.prefix, '--monthly-completions', '50'),
  },
  { name: 'plan set', actions: ['plan.changed'], run: () => cliOk('plan', 'set', '--email', OWNER, 'PRO') },
  {
    name: 'keys rotate',
    actions: ['key.rotated'],
    run: async () => {
      state.rotated = keep((await cliOk('keys', 'rotate', state.prefix, '--grace', '0')).last).split('_')[1]
    },
  },
  { name: 'keys revoke', actions: ['key.revoked'], run: () => cliOk('keys', 'revoke', state.rotated) },
  {
    name: 'keys create with no user',
    actions: ['account.created', 'key.created'],
    run: async () => keep((await cliOk('keys', 'create', '--plan', 'STARTER')).last),
  },
  {
    name: 'signin-link',
    actions: ['signin_link.created'],
    run: async () => {
      state.link = (await cliOk('signin-link', '--email', OWNER)).last
      keep(tokenOf(state.link))
    },
  },
  {
    name: 'a sign-in link used: password set, signed in',
    actor: 'user',
    actions: ['password.changed', 'signin.succeeded'],
    run: () => owner.post(new URL(state.link).pathname, { password: keep(PASSWORD), confirm: PASSWORD }),
  },
  {
    name: 'sign out',
    actor: 'user',
    actions: ['signout'],
    run: () => owner.submit('/dashboard/keys', '/dashboard/signout'),
  },
  {
    name: 'a wrong password',
    actor: 'user',
    actions: ['signin.failed'],
    run: () => owner.post('/dashboard/signin', { email: OWNER, password: keep('not the password at all') }),
  },
  {
    name: 'an unknown email',
    actor: 'user',
    actions: ['signin.failed'],
    run: () => owner.post('/dashboard/signin', { email: 'nobody@example.com', password: keep('guessing a password') }),
  },
  {
    name: 'sign in',
    actor: 'user',
    actions: ['signin.succeeded'],
    run: () => owner.post('/dashboard/signin', { email: OWNER, password: PASSWORD }),
  },
  {
    name: 'change password',
    actor: 'user',
    actions: ['password.changed'],
    run: () =>
      owner.submit('/dashboard/account', '/dashboard/account/password', {
        current: PASSWORD,
        password: keep(NEW_PASSWORD),
        confirm: NEW_PASSWORD,
      }),
  },
  {
    name: 'sign out everywhere else',
    actor: 'user',
    actions: ['signout.everywhere'],
    run: () => owner.submit('/dashboard/account', '/dashboard/account/signout-everywhere'),
  },
  {
    name: 'dashboard: create a key',
    actor: 'user',
    actions: ['key.created'],
    run: async () => {
      const page = (await owner.submit('/dashboard/keys', '/dashboard/keys', { name: 'site', expires: '' })).text
      keep(shown(page, 'new-key'))
      state.dashKey = dashboardPrefix(page)
    },
  },
  {
    name: "dashboard: set a key's limits",
    actor: 'user',
    actions: ['key.limited'],
    run: () =>
      owner.submit('/dashboard/keys', `/dashboard/keys/${state.dashKey}/limits`, {
        rate_limit: '10',
        monthly_completions: '',
      }),
  },
  {
    name: 'dashboard: rotate a key',
    actor: 'user',
    actions: ['key.rotated'],
    run: async () => {
      const page = (await owner.submit('/dashboard/keys', `/dashboard/keys/${state.dashKey}/rotate`, { grace: '0' }))
        .text
      keep(shown(page, 'new-key'))
      state.dashKey = dashboardPrefix(page)
    },
  },
  {
    name: 'dashboard: revoke a key',
    actor: 'user',
    actions: ['key.revoked'],
    run: () => owner.submit('/dashboard/keys', `/dashboard/keys/${state.dashKey}/revoke`, { confirm: 'yes' }),
  },
  {
    name: 'invite a member (with a sign-in link)',
    actor: 'user',
    actions: ['member.invited', 'signin_link.created'],
    run: async () => {
      const page = (await owner.submit('/dashboard/team', '/dashboard/team', { email: MEMBER, role: 'member' })).text
      keep(tokenOf(shown(page, 'new-link') ?? ''))
      const team = (await owner.get('/dashboard/team')).text
      state.memberId = memberId(team, MEMBER)
    },
  },
  {
    name: 'change a role',
    actor: 'user',
    actions: ['member.role_changed'],
    run: () => owner.submit('/dashboard/team', `/dashboard/team/${state.memberId}/role`, { role: 'admin' }),
  },
  {
    name: 'a sign-in link for a member',
    actor: 'user',
    actions: ['signin_link.created'],
    run: async () => {
      const page = (await owner.submit('/dashboard/team', `/dashboard/team/${state.memberId}/link`)).text
      keep(tokenOf(shown(page, 'new-link') ?? ''))
    },
  },
  {
    name: 'remove a member',
    actor: 'user',
    actions: ['member.removed'],
    run: () => owner.submit('/dashboard/team', `/dashboard/team/${state.memberId}/remove`),
  },
  {
    name: 'dashboard: add a webhook endpoint',
    actor: 'user',
    actions: ['webhook.added'],
    run: async () => {
      const form = { url: 'http://127.0.0.1:9/hook', scope: 'all', kind: 'standard', description: 'ours' }
      const page = (await owner.submit('/dashboard/webhooks', '/dashboard/webhooks', form)).text
      keep(shown(page, 'new-secret'))
      state.endpoint = /\/dashboard\/webhooks\/([0-9a-f-]{36})/.exec(page)?.[1] ?? ''
    },
  },
  ...(['disable', 'enable', 'rotate'] as const).map((what) => ({
    name: `dashboard: ${what} a webhook endpoint`,
    actor: 'user' as const,
    actions: [{ disable: 'webhook.disabled', enable: 'webhook.enabled', rotate: 'webhook.secret_rotated' }[what]],
    run: async () => {
      const path = `/dashboard/webhooks/${state.endpoint}`
      const page = (await owner.submit(path, `${path}/${what}`)).text
      if (what === 'rotate') keep(shown(page, 'new-secret'))
    },
  })),
  {
    name: 'dashboard: delete a webhook endpoint',
    actor: 'user',
    actions: ['webhook.removed'],
    run: () =>
      owner.submit(`/dashboard/webhooks/${state.endpoint}`, `/dashboard/webhooks/${state.endpoint}/delete`, {
        confirm: 'yes',
      }),
  },
  {
    name: 'webhooks add',
    actions: ['webhook.added'],
    run: async () => {
      const r = await cliOk('webhooks', 'add', '--email', OWNER, '--url', 'http://127.0.0.1:9/cli')
      keep(r.last)
      state.cliEndpoint = /endpoint ([0-9a-f-]{36}) added/.exec(r.out.join('\n'))?.[1] ?? ''
    },
  },
  {
    name: 'webhooks disable',
    actions: ['webhook.disabled'],
    run: () => cliOk('webhooks', 'disable', state.cliEndpoint),
  },
  { name: 'webhooks enable', actions: ['webhook.enabled'], run: () => cliOk('webhooks', 'enable', state.cliEndpoint) },
  {
    name: 'webhooks rotate',
    actions: ['webhook.secret_rotated'],
    run: async () => keep((await cliOk('webhooks', 'rotate', state.cliEndpoint)).last),
  },
  { name: 'webhooks remove', actions: ['webhook.removed'], run: () => cliOk('webhooks', 'remove', state.cliEndpoint) },
]

t.test('every change writes one entry per thing changed, with its actor', async (t) => {
  for (const step of steps) {
    const before = await lastId()
    await step.run()
    const entries = await since(before)
    t.same(
      entries.map((e) => e.action),
      step.actions,
      step.name
    )
    for (const e of entries) {
      if (step.actor === 'user') {
        t.equal(e.actor_kind, 'user', `${step.name}: by a user`)
        t.match(e.address ?? '', /127\.0\.0\.1|::1/, `${step.name}: the client's address`)
      } else {
        t.equal(e.actor_kind, 'cli', `${step.name}: by the CLI`)
        t.ok(e.actor.length > 0, `${step.name}: with the OS user`)
        t.equal(e.address, null)
      }
    }
  }
})

t.test('what entries say: targets, values before and after, no account for an unknown email', async (t) => {
  const all = await sql<Entry[]>`select * from audit_log order by id`
  const find = (action: string, target?: string) =>
    all.find((e) => e.action === action && (!target || e.target === target))
  const rotated = find('key.rotated', state.prefix)
  t.same(rotated?.before, { prefix: state.prefix })
  t.equal(rotated?.after?.prefix, state.rotated, 'a rotation names the old and the new prefix')
  t.same(find('key.scopes_narrowed')?.before, { scopes: SCOPES })
  t.same(find('key.scopes_narrowed')?.after, { scopes: ['me:read', 'leads:write'] })
  t.same(find('key.limited')?.before, { rate_limit: null, monthly_completions: null })
  t.same(find('key.limited')?.after, { rate_limit: null, monthly_completions: 50 })
  t.same(find('plan.changed')?.before, { plan: 'FREE' })
  t.same(find('plan.changed')?.after, { plan: 'PRO' })
  t.same(find('user.changed', OWNER)?.after, { name: 'Olivia' })
  t.same(find('member.role_changed', MEMBER)?.before, { role: 'member' })
  t.same(find('member.role_changed', MEMBER)?.after, { role: 'admin' })
  const unknown = find('signin.failed', 'nobody@example.com')
  t.equal(unknown?.account_id, null, 'a failed sign-in of an unknown email belongs to no account')
  t.ok(find('signin.failed', OWNER)?.account_id, "a wrong password is in the user's account")
})

t.test('a refused change writes no entry', async (t) => {
  const refused: [string, () => Promise<{ code?: number; status?: number }>][] = [
    ['revoke an unknown key', () => cli('keys', 'revoke', 'AAAAAAAAAAAA')],
    ['rotate a revoked key', () => cli('keys', 'rotate', state.rotated)],
    ["widen a key's scopes", () => cli('keys', 'scopes', state.prefix, '--scopes', 'completions:write')],
    ['a rate limit of 0', () => cli('keys', 'limit', state.prefix, '--rate-limit', '0')],
    ['limit an unknown key', () => cli('keys', 'limit', 'AAAAAAAAAAAA', '--rate-limit', '5')],
    ['plan set for an unknown email', () => cli('plan', 'set', '--email', 'nobody@example.com', 'PRO')],
    ['remove an unknown endpoint', () => cli('webhooks', 'remove', '00000000-0000-4000-8000-000000000000')],
    [
      'demote the last owner',
      async () => {
        const team = (await owner.get('/dashboard/team')).text
        const me = memberId(team, OWNER)
        return owner.submit('/dashboard/team', `/dashboard/team/${me}/role`, { role: 'member' })
      },
    ],
    [
      'a wrong current password',
      () =>
        owner.submit('/dashboard/account', '/dashboard/account/password', {
          current: 'wrong wrong wrong',
          password: 'whatever whatever',
          confirm: 'whatever whatever',
        }),
    ],
    ['a form without its CSRF token', () => owner.post('/dashboard/keys', { name: 'x', expires: '' })],
    [
      'a dashboard limit that is not a number',
      () => owner.submit('/dashboard/keys', `/dashboard/keys/${state.prefix}/limits`, { rate_limit: 'lots' }),
    ],
  ]
  const before = await lastId()
  t.equal((await cli('keys', 'revoke', state.rotated)).code, 0, 'revoking a revoked key changes nothing')
  t.equal((await cli('plan', 'set', '--email', OWNER, 'PRO')).code, 0, 'nor does setting the same plan')
  t.equal((await cli('keys', 'limit', state.prefix, '--monthly-completions', '50')).code, 0, 'nor the same limit')
  t.same(await since(before), [], 'and writes no entry')
  for (const [name, attempt] of refused) {
    const before = await lastId()
    const r = await attempt()
    t.ok((r.code ?? 0) !== 0 || (r.status ?? 200) >= 400, `${name}: refused`)
    t.same(await since(before), [], `${name}: no entry`)
  }
})

t.test('no entry holds a key, a password, a token or a secret', async (t) => {
  t.ok(secrets.length >= 15, `${secrets.length} secrets`)
  const text = (await sql<{ j: string }[]>`select row_to_json(a)::text as j from audit_log a`)
    .map((r) => r.j)
    .join('\n')
  for (const s of secrets) {
    t.notOk(text.includes(s), `absent: ${s.slice(0, 12)}…`)
    const part = s.split('_').at(-1) ?? s
    t.notOk(part.length >= 16 && text.includes(part), 'its random part too')
  }
})

t.test('the log is append-only', async (t) => {
  await t.rejects(sql`update audit_log set action = 'x'`, /append-only/)
})

t.test('studio audit: tab-separated with a header line, oldest first, by account and since a date', async (t) => {
  const all = await cliOk('audit')
  t.equal(all.out[0], 'TIME\tACCOUNT\tACTOR\tACTION\tTARGET\tADDRESS\tBEFORE\tAFTER')
  const rows = all.out.slice(1).map((l) => l.split('\t'))
  t.ok(
    rows.every((r) => r.length === 8),
    'eight cells a line'
  )
  t.ok(rows.length >= 30, `${rows.length} entries`)
  const times = rows.map((r) => r[0])
  t.same(times, [...times].sort(), 'oldest first')
  const unknown = rows.find((r) => r[3] === 'signin.failed' && r[4] === 'nobody@example.com')
  t.equal(unknown?.[1], '-', "an unknown email's failed sign-in: no account, shown here")
  t.match(rows.find((r) => r[3] === 'plan.changed')?.[2] ?? '', /^cli \(.+\)$/, 'the CLI and its OS user')

  const mine = (await cliOk('audit', '--email', OWNER)).out.slice(1).map((l) => l.split('\t'))
  t.ok(mine.length > 20 && mine.every((r) => r[1] === mine[0][1] && r[1] !== '-'), "one account's entries")
  t.notOk(mine.some((r) => r[4] === 'nobody@example.com'))

  const later = await cliOk('audit', '--since', '2999-01-01')
  t.same(later.out, [all.out[0]], 'nothing since a future day: the header alone')
  const today = new Date().toISOString().slice(0, 10)
  t.ok((await cliOk('audit', '--since', `${today}T00:00Z`)).out.length > 1)

  for (const args of [['--since', 'yesterday'], ['--since', '2026-02-30x'], ['--email', 'not-an-email'], ['extra']]) {
    const bad = await cli('audit', ...args)
    t.equal(bad.code, 2, args.join(' '))
    t.match(bad.err[0], /^studio: /)
    t.same(bad.out, [])
  }
  const nobody = await cli('audit', '--email', 'nobody@example.com')
  t.equal(nobody.code, 1)
  t.match(nobody.err[0], 'no user with email nobody@example.com')
})

t.test('entries past STUDIO_AUDIT_RETENTION_DAYS are pruned, in batches; the rest stay', async (t) => {
  const count = async () => (await sql<{ n: number }[]>`select count(*)::int as n from audit_log`)[0].n
  const kept = await count()
  await sql`insert into audit_log (at, account_id, actor_kind, actor, action)
            select now() - interval '401 days' - g * interval '1 second', null, 'cli', 'old', 'signout'
            from generate_series(1, 1500) g`
  await sql`insert into audit_log (at, actor_kind, actor, action)
            values (now() - interval '399 days', 'cli', 'x', 'signout')`
  t.equal(await pruneAudit(sql, new Date(), 400), 1500)
  t.equal(await count(), kept + 1)
  t.equal(await pruneAudit(sql, new Date(), 398), 1, 'a shorter retention')
  t.equal(await count(), kept)
})
