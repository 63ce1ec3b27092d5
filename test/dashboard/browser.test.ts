import t from 'tap'
import type { Page } from 'playwright-core'
import { needsChromium, openBrowser, watchProblems } from '../support/browser.js'
import { PASSWORD, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'

// The dashboard in a real browser (Debian's Chromium through playwright-core).
if (needsChromium(t)) await run()

async function run() {
  const dbEnv = await testDatabase(t)
  const server = await startTestServer(t, {}, { dbEnv })
  const env = { STUDIO_PUBLIC_URL: server.url }
  const origin = new URL(server.url).origin

  // Every page a test opens: any dialog, console error, failed request or request to another origin is recorded.
  const watched = async (page: Page) => watchProblems(page, origin)

  async function me(key: string) {
    return (await server.fetch('/api/v1/me', { key })).status
  }
  const refusedWithin = (key: string, timeout: number) =>
    eventually(async () => (await me(key)) === 401, { timeout, what: 'GET /me refused' }).catch(() => false)

  const context = await openBrowser(t)
  const page = await context.newPage()
  const problems = await watched(page)
  const url = (path: string) => `${server.url}${path}`

  await t.test('sign in with a CLI link, set a password, sign out and in again', async (t) => {
    await page.goto(await signinLink(dbEnv, env, ['--email', 'owner@example.com', '--name', 'Olive Owner']))
    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat it').fill(PASSWORD)
    await page.getByRole('button', { name: 'Save and sign in' }).click()
    await page.waitForURL(url('/dashboard/keys'))
    t.match(await page.textContent('h1'), 'API keys')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(url('/dashboard/signin'))
    await page.getByLabel('Email').fill('owner@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(url('/dashboard/keys'))
    const cookies = await context.cookies()
    t.ok(cookies.find((c) => c.name === 'studio_session' && c.httpOnly && c.sameSite === 'Lax'))
  })

  let key = ''
  await t.test('create a key and use it; rotate it; revoke it and see it refused within a second', async (t) => {
    await page.getByLabel('Name').fill('browser key')
    await page.getByRole('button', { name: 'Create key' }).click()
    key = (await page.textContent('#new-key')) ?? ''
    t.match(key, /^studio_/)
    t.equal(await me(key), 200)
    const prefix = key.split('_')[1]
    await page.goto(url('/dashboard/keys'))
    t.notMatch(await page.content(), key, 'shown once')
    const row = page.locator('tr', { hasText: prefix })
    await row.getByRole('link', { name: 'Rotate' }).click()
    const grace = page.getByLabel('Old key keeps working for')
    t.equal(await grace.inputValue(), '86400', 'preselected: 24 hours, as `keys rotate`')
    await grace.selectOption('0')
    await page.getByRole('button', { name: 'Confirm rotate' }).click()
    const next = (await page.textContent('#new-key')) ?? ''
    t.not(next, key)
    t.ok(await refusedWithin(key, 1500), 'the old key is refused (no grace)')
    t.equal(await me(next), 200)
    await page.goto(url('/dashboard/keys'))
    await page
      .locator('tr', { hasText: next.split('_')[1] })
      .getByRole('button', { name: 'Revoke' })
      .click()
    await page.getByRole('button', { name: 'Revoke the key' }).click()
    await page.waitForURL(url('/dashboard/keys?done=revoked'))
    t.ok(await refusedWithin(next, 1500), 'the revoked key is refused within a second or so')
    key = next
  })

  await t.test('a key made with a scope unchecked lacks it', async (t) => {
    await page.getByLabel('Name').fill('no ai')
    await page.getByLabel('completions:write').uncheck()
    await page.getByRole('button', { name: 'Create key' }).click()
    const narrow = (await page.textContent('#new-key')) ?? ''
    t.equal(await me(narrow), 200)
    const ai = await server.fetch('/api/v1/ai/completions', { method: 'POST', key: narrow, json: { messages: [] } })
    t.equal(ai.status, 403)
    const row = await page.goto(url('/dashboard/keys')).then(() => page.locator('tr', { hasText: 'no ai' }))
    t.notMatch(await row.textContent(), 'completions:write')
  })

  await t.test('a lead sent through the API: in the list, its detail page and the CSV', async (t) => {
    const apiKey = await server.key({ email: 'owner@example.com', keyName: 'form' })
    const r = await server.fetch('/api/v1/leads', {
      method: 'POST',
      key: apiKey,
      json: { name: 'Browser Lead', email: 'bl@example.com', service: 'web', message: 'hi', company: 'Acme' },
    })
    t.equal(r.status, 201)
    await page.goto(url('/dashboard/leads'))
    await page.getByLabel('Search name, email, company, message').fill('acme')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.getByRole('link', { name: 'Browser Lead' }).click()
    t.match(await page.textContent('main'), 'bl@example.com')
    const csv = await context.request.get(url('/dashboard/leads.csv?q=acme'))
    t.match(await csv.text(), 'Browser Lead,bl@example.com,Acme')
  })

  await t.test('a hostile lead runs nothing', async (t) => {
    const apiKey = await server.key({ email: 'owner@example.com' })
    const evil = `"><img src=https://evil.example/x.png onerror=alert(1)><script>alert(2)</script>`
    const r = await server.fetch('/api/v1/leads', {
      method: 'POST',
      key: apiKey,
      json: {
        name: evil,
        email: 'e@example.com',
        service: evil,
        message: `javascript:alert(3) ${evil}`,
        company: evil,
      },
    })
    const { id } = (await r.json()) as { id: string }
    await page.goto(url('/dashboard/leads'))
    await page.goto(url(`/dashboard/leads/${id}`))
    t.match(await page.textContent('h1'), '<script>alert(2)</script>', 'shown as text')
    t.equal(await page.locator('main img').count(), 0)
    t.same(problems, [], 'no dialog, console error or foreign request')
  })

  await t.test("budgets: a key's on its Limits page, the account's on the Account page, set and lifted", async (t) => {
    await page.goto(url('/dashboard/keys'))
    await page.getByLabel('Name').fill('budget key')
    await page.getByRole('button', { name: 'Create key' }).click()
    const prefix = ((await page.textContent('#new-key')) ?? '').split('_')[1]
    const keyBudget = async () =>
      (
        await server.db.sql<
          { b: string | null }[]
        >`select budget_micros::text as b from api_keys where prefix = ${prefix}`
      )[0].b
    await page.goto(url(`/dashboard/keys/${prefix}/limits`))
    await page.getByLabel('Monthly budget (USD)').fill('5.00')
    await page.getByRole('button', { name: 'Save limits' }).click()
    await page.waitForURL(url('/dashboard/keys?done=limited'))
    t.equal(await keyBudget(), '5000000')
    await page.goto(url(`/dashboard/keys/${prefix}/limits`))
    t.equal(await page.getByLabel('Monthly budget (USD)').inputValue(), '5.000000', 'shown as saved')
    await page.getByLabel('Monthly budget (USD)').fill('5.0.0')
    await page.getByRole('button', { name: 'Save limits' }).click()
    t.match(await page.textContent('main'), 'Monthly budget: an amount in USD', 'a bad amount is refused with a page')
    t.equal(await keyBudget(), '5000000', 'and nothing changed')
    await page.goto(url(`/dashboard/keys/${prefix}/limits`))
    await page.getByLabel('Monthly budget (USD)').fill('')
    await page.getByRole('button', { name: 'Save limits' }).click()
    await page.waitForURL(url('/dashboard/keys?done=limited'))
    t.equal(await keyBudget(), null, 'lifted')

    const accountBudget = async () =>
      (
        await server.db.sql<{ b: string | null }[]>`
          select a.budget_micros::text as b from accounts a join users u on u.account_id = a.id
          where u.email = 'owner@example.com'`
      )[0].b
    await page.goto(url('/dashboard/account'))
    await page.getByLabel('Monthly budget (USD)').fill('25.00')
    await page.getByRole('button', { name: 'Save budget' }).click()
    await page.waitForURL(url('/dashboard/account?done=budget'))
    t.equal(await accountBudget(), '25000000')
    t.equal(await page.getByLabel('Monthly budget (USD)').inputValue(), '25.000000')
    await page.getByLabel('Monthly budget (USD)').fill('')
    await page.getByRole('button', { name: 'Save budget' }).click()
    await page.waitForURL(url('/dashboard/account?done=budget'))
    t.equal(await accountBudget(), null, 'lifted')
    const entries = await server.db.sql<{ action: string; actor_kind: string; after: unknown }[]>`
      select action, actor_kind, after from audit_log where action in ('budget.changed', 'key.budget_changed')
      order by id`
    t.match(entries, [
      { action: 'key.budget_changed', actor_kind: 'user', after: { budget: '5.000000' } },
      { action: 'key.budget_changed', actor_kind: 'user', after: { budget: null } },
      { action: 'budget.changed', actor_kind: 'user', after: { budget: '25.000000' } },
      { action: 'budget.changed', actor_kind: 'user', after: { budget: null } },
    ])
    // The refused amount's 400 page is the one console line Chromium writes.
    t.same(
      problems.filter((p) => !p.includes('status of 400')),
      [],
      'no dialog, other console error or foreign request'
    )
  })

  await t.test("a member: own keys only (the owner's are not listed), no Team", async (t) => {
    await page.goto(url('/dashboard/team'))
    await page.getByLabel('Email').fill('member@example.com')
    await page.getByRole('combobox', { name: 'Role' }).first().selectOption('member')
    await page.getByRole('button', { name: 'Create sign-in link' }).click()
    const link = (await page.textContent('#new-link')) ?? ''
    const memberContext = await openBrowser(t)
    const m = await memberContext.newPage()
    const memberProblems = await watched(m)
    await m.goto(link)
    await m.getByLabel('New password').fill(PASSWORD)
    await m.getByLabel('Repeat it').fill(PASSWORD)
    await m.getByRole('button', { name: 'Save and sign in' }).click()
    await m.waitForURL(url('/dashboard/keys'))
    t.equal(await m.getByRole('link', { name: 'Team' }).count(), 0)
    t.notMatch(await m.content(), 'browser key', "the owner's keys are not listed")
    await m.getByLabel('Name').fill('member key')
    await m.getByRole('button', { name: 'Create key' }).click()
    const memberKey = (await m.textContent('#new-key')) ?? ''
    t.equal(await me(memberKey), 200)
    t.same(memberProblems, [])
    const team = await m.goto(url('/dashboard/team'))
    t.equal(team?.status(), 403)
    t.match(await m.textContent('main'), 'Request id')
    await page.goto(url('/dashboard/keys'))
    t.match(await page.content(), 'member key', 'the owner sees it')
  })

  await t.test('usable at 375 px and by keyboard', async (t) => {
    await page.setViewportSize({ width: 375, height: 800 })
    await page.goto(url('/dashboard/usage'))
    const width = Number(await page.evaluate('document.documentElement.scrollWidth'))
    t.ok(width <= 375, `no sideways scrolling (${width})`)
    await page.goto(url('/dashboard/account'))
    await page.keyboard.press('Tab')
    t.equal(await page.evaluate('document.activeElement?.textContent'), 'Skip to content')
  })
}
