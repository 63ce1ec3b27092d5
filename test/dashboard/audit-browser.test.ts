import { readFileSync } from 'node:fs'
import t from 'tap'
import { run as studio } from '../../src/cli/cli.js'
import { needsChromium, openBrowser, watchProblems } from '../support/browser.js'
import { PASSWORD, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

// The Audit log page in a real browser: reached from the navigation, filtered with its plain GET form, exported as
// CSV; a member is refused it.
if (needsChromium(t)) await run()

async function run() {
  const quiet = { out: () => {}, err: () => {} }
  const dbEnv = await testDatabase(t)
  const server = await startTestServer(t, {}, { dbEnv })
  const url = (path: string) => `${server.url}${path}`
  const env = { STUDIO_PUBLIC_URL: server.url }
  const context = await openBrowser(t)
  const page = await context.newPage()
  const problems = watchProblems(page, new URL(server.url).origin)

  async function signIn(email: string) {
    await page.goto(await signinLink(dbEnv, env, ['--email', email]))
    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat it').fill(PASSWORD)
    await page.getByRole('button', { name: 'Save and sign in' }).click()
    await page.waitForURL(url('/dashboard/keys'))
  }
  const actions = () => page.locator('tbody tr td:nth-child(3)').allTextContents()

  await t.test('an owner opens the Audit log from the navigation: newest first', async (t) => {
    await signIn('owner@example.com')
    await studio(['plan', 'set', '--email', 'owner@example.com', 'PRO'], { ...dbEnv, ...env }, quiet)
    await page.getByLabel('Name').fill('browser key')
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByRole('link', { name: 'Audit log' }).click()
    await page.waitForURL(url('/dashboard/audit'))
    t.equal(await page.textContent('h1'), 'Audit log')
    t.same((await actions()).slice(0, 4), ['key.created', 'plan.changed', 'signin.succeeded', 'password.changed'])
    t.match(await page.locator('tbody tr').first().textContent(), 'owner@example.com')
  })

  await t.test('filter by action, then by actor; export the filtered entries as CSV', async (t) => {
    await page.getByLabel('Action').selectOption('plan.changed')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/action=plan.changed/)
    t.same(await actions(), ['plan.changed'])
    await page.getByLabel('Action').selectOption('')
    await page.getByLabel('Actor').selectOption({ label: 'owner@example.com' })
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/actor=user/)
    t.same(await actions(), ['key.created', 'signin.succeeded', 'password.changed'])
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ])
    t.equal(download.suggestedFilename(), 'audit-log.csv')
    const lines = readFileSync((await download.path()) as string, 'utf8')
      .split('\r\n')
      .filter(Boolean)
    t.equal(lines[0], 'time,actor,action,target,address,before,after')
    t.same(
      lines.slice(1).map((l) => l.split(',')[2]),
      ['key.created', 'signin.succeeded', 'password.changed']
    )
  })

  await t.test('a member sees no Audit log link and gets the forbidden page', async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(url('/dashboard/signin'))
    await studio(['keys', 'create', '--email', 'member@example.com', '--role', 'member'], { ...dbEnv, ...env }, quiet)
    await signIn('member@example.com')
    t.equal(await page.getByRole('link', { name: 'Audit log' }).count(), 0)
    const answer = await page.goto(url('/dashboard/audit'))
    t.equal(answer?.status(), 403)
    t.equal(await page.textContent('h1'), 'Not allowed')
    problems.splice(0, problems.length, ...problems.filter((p) => !p.includes('403')))
    t.same(problems, [], 'no script error, dialog or foreign request')
  })
}
