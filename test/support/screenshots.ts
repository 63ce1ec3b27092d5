// `npm run screenshots`: a 1280×800 PNG of every dashboard section in docs/screenshots/, over a seeded database.
import { mkdirSync } from 'node:fs'
import { openBrowser } from './browser.js'
import { seedDashboard } from './dashboard-seed.js'
import { eventually } from './eventually.js'

const cleanups: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => cleanups.push(fn) }
try {
  const { server, link, crm } = await seedDashboard(t)
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
  const assistant = page.locator('tr', { hasText: 'support assistant' })
  await assistant.getByRole('link', { name: 'Limits' }).click()
  await page.screenshot({ path: 'docs/screenshots/key-limits.png' })
  await page.goto(`${server.url}/dashboard/keys`)
  await assistant.getByRole('link', { name: 'Rotate' }).click()
  await page.screenshot({ path: 'docs/screenshots/key-rotate.png' })
  await page.goto(`${server.url}/dashboard/keys`)
  await page
    .locator('tr', { hasText: 'contact form on the marketing site' })
    .getByRole('link', { name: /^Form/ })
    .click()
  await page.screenshot({ path: 'docs/screenshots/key-form.png', fullPage: true })
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
  // Only the confirmation page: the lead stays for the pictures after this one.
  await page.getByRole('button', { name: 'Erase', exact: true }).click()
  await page.screenshot({ path: 'docs/screenshots/lead-erase.png' })
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
