// `npm run screenshots`: a 1280×800 PNG of every dashboard section in docs/screenshots/, over a seeded database.
import { mkdirSync } from 'node:fs'
import { addEndpoint } from '../../src/events/endpoints.js'
import { signinLink } from './dashboard-client.js'
import { openBrowser } from './browser.js'
import { testDatabase } from './database.js'
import { eventually } from './eventually.js'
import { receiver } from './receiver.js'
import { startTestServer } from './server.js'
import { smtpServer } from './smtp.js'

const cleanups: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => cleanups.push(fn) }
try {
  const dbEnv = await testDatabase(t)
  // Private addresses allowed: the webhook endpoints are receivers on this machine. Mail on, to a local SMTP server:
  // the sign-in page offers a mailed link and the Account page the lead-mail choice.
  const smtp = await smtpServer(t)
  const server = await startTestServer(
    t,
    {
      STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true',
      STUDIO_SMTP_URL: smtp.url,
      STUDIO_MAIL_FROM: 'Studio <studio@example.com>',
    },
    { dbEnv }
  )
  const env = { STUDIO_PUBLIC_URL: server.url }
  const link = await signinLink(dbEnv, env, [
    '--email',
    'ada@example.com',
    '--name',
    'Ada Lovelace',
    '--plan',
    'STARTER',
  ])
  const sql = server.db.sql
  const key = await server.key({ email: 'ada@example.com', keyName: 'website contact form' })
  await server.key({ email: 'ada@example.com', keyName: 'staging' })
  await signinLink(dbEnv, env, ['--email', 'grace@example.com', '--name', 'Grace Hopper'])
  const [{ account_id }] = await sql<
    { account_id: string }[]
  >`select account_id from users where email = 'ada@example.com'`
  await sql`update users set account_id = ${account_id}, role = 'admin' where email = 'grace@example.com'`
  // Two endpoints, before the leads so that their lead.created events are delivered and logged: one that takes them
  // (but refuses the key.created event once, so that the log shows a retry), one that answered 410 and was disabled.
  let refused = false
  const crm = await receiver(t, (r, res) => {
    if (refused || !r.body.includes('"key.created"')) return res.end('{"ok":true}')
    refused = true
    res.statusCode = 503
    res.end('Service Unavailable: deploy in progress')
  })
  const gone = await receiver(t, (_, res) => {
    res.statusCode = 410
    res.end('This hook was removed.')
  })
  const hooks = [
    { accountId: account_id, url: crm.url, description: 'CRM sync' },
    { accountId: account_id, url: gone.url, events: ['lead.created'], description: 'Old Zapier zap' },
  ]
  for (const h of hooks) await addEndpoint(sql, h, true)
  const people = [
    'Marie Curie',
    'Alan Turing',
    'Katherine Johnson',
    'Linus Pauling',
    'Rosalind Franklin',
    'Tim Berners-Lee',
  ]
  for (const [i, name] of people.entries()) {
    const r = await server.fetch('/api/v1/leads', {
      method: 'POST',
      key,
      json: {
        name,
        email: `${name.split(' ')[0].toLowerCase()}@example.org`,
        company: ['Radium Ltd', 'Bletchley', 'NASA', 'Caltech', "King's College", 'CERN'][i],
        service: ['Website', 'Mobile app', 'Consulting'][i % 3],
        message: 'We would like a quote for a new project starting next quarter.',
        utm: { source: 'newsletter', campaign: 'autumn' },
      },
    })
    if (r.status !== 201) throw new Error(`lead: ${r.status}`)
  }
  await eventually(() => crm.got.length === people.length && gone.got.length >= 1, { what: 'the leads delivered' })
  const prefix = key.split('_')[1]
  const now = new Date()
  for (let day = 1; day <= now.getUTCDate(); day++) {
    const n = 3 + ((day * 7) % 11)
    const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), day, 12))
    await sql`insert into completions (account_id, key_prefix, model_alias, upstream_model, input_tokens, output_tokens,
      latency_ms, attempts, outcome, created_at)
      select ${account_id}, ${prefix}, 'primary', 'model', 120, 340, 800, 1, case when g % 9 = 0 then 'upstream_error' else 'ok' end, ${at}
      from generate_series(1, ${n}) g`
  }
  await sql`insert into quota_usage (account_id, month, used) values (${account_id}, date_trunc('month', now())::date, 1234)
            on conflict do nothing`
  mkdirSync('docs/screenshots', { recursive: true })
  const context = await openBrowser(t)
  const page = await context.newPage()
  await page.goto(`${server.url}/dashboard/signin`)
  await page.screenshot({ path: 'docs/screenshots/signin.png' })
  await page.goto(link)
  await page.screenshot({ path: 'docs/screenshots/signin-link.png' })
  await page.fill('#password', 'correct horse battery staple')
  await page.fill('#confirm', 'correct horse battery staple')
  await page.click('button')
  await page.waitForURL('**/dashboard/keys')
  await page.fill('#name', 'backend')
  await page.click('text=Create key')
  // Not the page that shows the new key: no secret in a committed picture, even a throwaway one.
  await page.goto(`${server.url}/dashboard/keys`)
  await page.screenshot({ path: 'docs/screenshots/keys.png' })
  for (const section of ['leads', 'usage', 'team', 'audit', 'account']) {
    await page.goto(`${server.url}/dashboard/${section}`)
    await page.screenshot({ path: `docs/screenshots/${section}.png` })
  }
  const keyEvents = () => crm.got.filter((r) => r.body.includes('"key.created"')).length
  await eventually(() => keyEvents() === 2, { what: 'the key.created event retried' })
  await page.goto(`${server.url}/dashboard/webhooks`)
  await page.screenshot({ path: 'docs/screenshots/webhooks.png' })
  await page.getByRole('link', { name: crm.url }).click()
  await page.click('text=Send test event')
  await eventually(
    async () => {
      await page.reload()
      const row = page.locator('table.log tr', { hasText: 'webhook.test' })
      return (await row.count()) === 1 && (await row.textContent())?.includes('delivered')
    },
    { what: 'the test event in the log' }
  )
  await page.goto(page.url().split('?')[0])
  await page.screenshot({ path: 'docs/screenshots/webhook.png' })
  await page.goto(`${server.url}/dashboard/leads`)
  await page.click('text=Marie Curie')
  await page.screenshot({ path: 'docs/screenshots/lead.png' })
  await page.emulateMedia({ colorScheme: 'dark' })
  await page.goto(`${server.url}/dashboard/usage`)
  await page.screenshot({ path: 'docs/screenshots/usage-dark.png' })
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize({ width: 375, height: 800 })
  await page.goto(`${server.url}/dashboard/leads`)
  await page.screenshot({ path: 'docs/screenshots/leads-375.png' })
  console.log('wrote docs/screenshots/*.png')
} finally {
  for (const fn of cleanups.reverse()) await fn()
}
