import { readFileSync } from 'node:fs'
import t from 'tap'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { needsChromium, openBrowser } from '../support/browser.js'
import { serveStatic } from '../support/static-site.js'
import { PASSWORD, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { issuedKeys, startTestServer } from '../support/server.js'

// The static contact form of docs/keys.md, in a real Chromium: served from an origin its lead key names, its script posts
// the lead (a CORS preflight, then the POST); served from another origin, the browser refuses to send it; a filled
// honeypot is kept as spam and shown under the dashboard's Spam filter; the per-address limit answers 429.
if (needsChromium(t)) await run()

// The form of docs/keys.md, its placeholders (the API's URL, the key) replaced.
function documentedForm(api: string, key: string) {
  const page = readFileSync(new URL('../../docs/keys.md', import.meta.url), 'utf8')
  const section = page.slice(page.indexOf('## Lead keys for web pages'))
  const html = /```html\n([\s\S]*?)```/.exec(section)?.[1]
  if (!html) throw new Error('no html block in the lead keys section of docs/keys.md')
  return html.replace('https://api.example.com', api).replace(/studio_X+_X+/, key)
}

async function run() {
  const dbEnv = await testDatabase(t)
  const server = await startTestServer(t, { STUDIO_LEAD_KEY_ADDRESS_LIMIT: '3' }, { dbEnv })
  const { sql } = server.db
  let html = ''
  const site = await serveStatic(t, () => html)
  const other = await serveStatic(t, () => html)
  const email = 'site-owner@example.com'
  const made = await createKey(sql, { email, scopes: ['leads:write'], origins: [site], keyName: 'contact form' })
  issuedKeys.push(made.key)
  html = documentedForm(server.url, made.key)
  const leads = async () =>
    sql<{ name: string; spam: boolean }[]>`select name, spam from leads where key_prefix = ${made.prefix}`
  // The key was made behind the server's back, as by another process: its origin arrives with the key poll.
  await eventually(
    async () =>
      (
        await server.fetch('/api/v1/leads', {
          method: 'OPTIONS',
          headers: { origin: site, 'access-control-request-method': 'POST' },
        })
      ).headers.has('access-control-allow-origin'),
    { what: 'the site’s origin in the preflight' }
  )

  const context = await openBrowser(t)
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))

  async function send(origin: string, name: string, honeypot = '') {
    await page.goto(`${origin}/contact.html`)
    await page.getByLabel('Name').fill(name)
    await page.getByLabel('Email').fill('ada@example.com')
    await page.getByLabel('Service').selectOption('Hosting')
    await page.getByLabel('Message').fill('Please call me back.')
    if (honeypot) await page.locator('input[name=website]').fill(honeypot)
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('#status[data-status]').waitFor()
    return { status: await page.getAttribute('#status', 'data-status'), text: await page.textContent('#status') }
  }

  await t.test('the form on the key’s own origin: the lead is stored', async (t) => {
    const sent = await send(site, 'Ada Lovelace')
    t.equal(sent.status, '201')
    t.match(sent.text, 'Thank you')
    t.same(await leads(), [{ name: 'Ada Lovelace', spam: false }])
  })

  await t.test('the same page on another origin: a CORS failure, nothing stored', async (t) => {
    const refused = page.waitForEvent('console', (m) => m.type() === 'error' && /CORS/i.test(m.text()))
    const sent = await send(other, 'Mallory')
    t.equal(sent.status, 'failed', 'fetch rejected: the browser did not send the POST')
    t.match(sent.text, 'could not be sent')
    t.match((await refused).text(), 'Access-Control-Allow-Origin')
    t.same(
      (await leads()).map((l) => l.name),
      ['Ada Lovelace']
    )
  })

  await t.test('a filled honeypot: answered as usual, kept as spam', async (t) => {
    const sent = await send(site, 'Spam Bot', 'http://spam.example')
    t.equal(sent.status, '201')
    t.match(sent.text, 'Thank you')
    t.same(
      (await leads()).find((l) => l.name === 'Spam Bot'),
      { name: 'Spam Bot', spam: true }
    )
  })

  await t.test('over the per-address limit: 429, shown by the page', async (t) => {
    t.equal((await send(site, 'Third')).status, '201')
    const sent = await send(site, 'Fourth')
    t.equal(sent.status, '429')
    t.match(sent.text, 'Too many messages')
    t.notOk(
      (await leads()).some((l) => l.name === 'Fourth'),
      'not stored'
    )
  })

  await t.test('the dashboard shows the spam under the Spam filter only', async (t) => {
    await page.goto(await signinLink(dbEnv, { STUDIO_PUBLIC_URL: server.url }, ['--email', email]))
    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat it').fill(PASSWORD)
    await page.getByRole('button', { name: 'Save and sign in' }).click()
    await page.waitForURL(`${server.url}/dashboard/keys`)
    t.match(await page.textContent('main'), site, 'the key’s origin on the keys page')
    await page.getByRole('link', { name: 'Leads' }).first().click()
    await page.waitForURL(`${server.url}/dashboard/leads`)
    const names = () => page.locator('tbody tr td:nth-child(2) a').allTextContents()
    t.same(await names(), ['Third', 'Ada Lovelace'])
    await page.getByLabel('Show').selectOption('spam')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/show=spam/)
    t.same(await names(), ['Spam Bot'])
    await page.getByRole('link', { name: 'Spam Bot' }).click()
    t.match(await page.textContent('main'), 'spam')
    t.same(errors, [], 'no script error')
  })
}
