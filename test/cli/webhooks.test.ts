import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { testDatabase } from '../support/database.js'

// studio webhooks add | list | remove, over a real database.
const dbEnv = await testDatabase(t)
const allow = { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }

async function cli(args: string[], env: Record<string, string> = {}) {
  const out: string[] = []
  const err: string[] = []
  const code = await run(args, { ...dbEnv, ...env }, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out, err }
}

await cli(['keys', 'create', '--email', 'hooks@example.com'])
await cli(['keys', 'create', '--email', 'other@example.com'])

t.test('add prints the endpoint id, then the secret alone on the last line; list never shows it', async (t) => {
  const add = await cli(
    ['webhooks', 'add', '--email', 'hooks@example.com', '--url', 'http://127.0.0.1:9/crm?token=x'].concat([
      '--events',
      'lead.created,key.revoked',
      '--description',
      'CRM',
    ]),
    allow
  )
  t.equal(add.code, 0, add.err.join('\n'))
  const id = /endpoint ([0-9a-f-]{36})/.exec(add.out[0])?.[1]
  t.ok(id, 'the id is printed')
  const secret = add.out.at(-1) as string
  t.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/)
  await cli(['webhooks', 'add', '--email', 'other@example.com', '--url', 'https://93.184.216.34/hook'])
  const all = await cli(['webhooks', 'list'])
  t.equal(all.code, 0)
  t.same(all.out[0].split('\t'), ['ID', 'ACCOUNT', 'URL', 'EVENTS', 'STATE', 'LAST_STATUS'])
  t.equal(all.out.length, 3)
  const mine = await cli(['webhooks', 'list', '--email', 'hooks@example.com'])
  t.equal(mine.out.length, 2)
  const row = mine.out[1].split('\t')
  t.equal(row[0], id)
  t.same(row.slice(2), ['http://127.0.0.1:9/crm?token=x', 'lead.created,key.revoked', 'enabled', '-'])
  t.notOk(all.out.join('\n').includes(secret.slice(6)), 'never the secret')
  const removed = await cli(['webhooks', 'remove', id as string])
  t.equal(removed.code, 0)
  t.equal((await cli(['webhooks', 'list', '--email', 'hooks@example.com'])).out.length, 1)
  const again = await cli(['webhooks', 'remove', id as string])
  t.equal(again.code, 1)
  t.match(again.err[0], /no webhook endpoint/)
})

t.test('a private address is refused without STUDIO_WEBHOOKS_ALLOW_PRIVATE; bad input is a clear error', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--url', 'https://127.0.0.1/hook'], /loopback, private/],
    [['--url', 'http://93.184.216.34/hook'], /must be https:/],
    [['--url', 'https://93.184.216.34/', '--events', 'lead.nope'], /event types are/],
    [['--url', 'https://93.184.216.34/', '--kind', 'teams'], /the kind is standard or slack/],
    [['--url', 'https://93.184.216.34/', '--kind', 'slack', '--events', 'key.created'], /lead.created only/],
    [['--url', 'https://127.0.0.1/slack', '--kind', 'slack'], /loopback, private/],
  ]
  for (const [args, message] of cases) {
    const r = await cli(['webhooks', 'add', '--email', 'hooks@example.com', ...args])
    t.equal(r.code, 1, args.join(' '))
    t.match(r.err[0], message)
  }
  for (const url of ['https://localhost/hook', 'http://93.184.216.34/hook']) {
    const r = await cli(['webhooks', 'add', '--email', 'hooks@example.com', '--url', url])
    t.match(r.err, [/STUDIO_WEBHOOKS_ALLOW_PRIVATE=true .*set for the server too/], `${url}: the setting, and where`)
  }
  const nobody = await cli(['webhooks', 'add', '--email', 'nobody@example.com', '--url', 'https://93.184.216.34/'])
  t.match(nobody.err[0], /no user with email/)
  t.equal((await cli(['webhooks', 'add', '--url', 'https://93.184.216.34/'])).code, 2, '--email is needed')
  t.equal((await cli(['webhooks', 'list', '--email', 'nobody@example.com'])).code, 1)
})

t.test('rotate prints the new secret alone on the last line; disable and enable show in list', async (t) => {
  const add = await cli(['webhooks', 'add', '--email', 'hooks@example.com', '--url', 'http://127.0.0.1:9/r'], allow)
  const id = /endpoint ([0-9a-f-]{36})/.exec(add.out[0])?.[1] as string
  const rotated = await cli(['webhooks', 'rotate', id])
  t.equal(rotated.code, 0, rotated.err.join('\n'))
  t.match(rotated.out[0], /the old secret keeps signing until \d{4}-/)
  t.match(rotated.out.at(-1), /^whsec_/)
  t.not(rotated.out.at(-1), add.out.at(-1))
  const state = async () =>
    (await cli(['webhooks', 'list', '--email', 'hooks@example.com'])).out.find((l) => l.startsWith(id))?.split('\t')[4]
  t.equal((await cli(['webhooks', 'disable', id])).code, 0)
  t.equal(await state(), 'disabled: disabled by hand from the command line')
  t.equal((await cli(['webhooks', 'enable', id])).code, 0)
  t.equal(await state(), 'enabled')
  for (const command of ['rotate', 'disable', 'enable']) {
    const missing = await cli(['webhooks', command, '00000000-0000-4000-8000-000000000000'])
    t.equal(missing.code, 1, command)
    t.match(missing.err[0], /no webhook endpoint/)
    t.equal((await cli(['webhooks', command])).code, 2, `${command} needs an ID`)
  }
})

t.test('add --kind slack: a Slack incoming webhook, sent lead.created only', async (t) => {
  const url = 'https://93.184.216.34/services/T0/B0/x'
  const add = await cli(['webhooks', 'add', '--email', 'other@example.com', '--url', url, '--kind', 'slack'])
  t.equal(add.code, 0, add.err.join('\n'))
  const id = /endpoint ([0-9a-f-]{36})/.exec(add.out[0])?.[1]
  const row = (await cli(['webhooks', 'list', '--email', 'other@example.com'])).out.find((l) => l.startsWith(`${id}`))
  t.same(row?.split('\t').slice(2, 5), [url, 'lead.created (Slack)', 'enabled'])
})
