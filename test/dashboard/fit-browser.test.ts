import t from 'tap'
import { dashboardPages } from '../../src/dashboard/dashboard.js'
import type { DashboardDeps } from '../../src/dashboard/page.js'
import { needsChromium, openBrowser, watchProblems } from '../support/browser.js'
import { PASSWORD } from '../support/dashboard-client.js'
import { seedDashboard } from '../support/dashboard-seed.js'

// Every page of the dashboard (its GET routes, so that a new page is measured too), full of long values, in Chromium
// at 1280×800 and at 375×800: no table is wider than its box. At 1280 nothing scrolls sideways, the keys table shows
// each key's status and actions and its dates on one line, and the side navigation runs the page's full height. At
// 375 a table may scroll inside a box made for it (`scroll-x`), never the page.

// Run in the page (as text: the tests' TypeScript has no DOM types). Each table and the element around it that is
// wider than it shows, and the page itself, as `what: scrollWidth > clientWidth`; `narrow` lets a table scroll in a
// box declared for it (class scroll-x).
const overflows = (narrow: boolean) => `(() => {
  const found = []
  const wide = (el) => el.scrollWidth > el.clientWidth
  for (const table of document.querySelectorAll('table')) {
    for (const el of [table, table.parentElement]) {
      if (!wide(el)) continue
      const scroller = ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)
      if (${narrow} && el.classList.contains('scroll-x') && scroller) continue
      const head = table.querySelector('th')?.textContent ?? ''
      found.push(el.tagName + '.' + el.className + ' (table of ' + head + '…): ' + el.scrollWidth + ' > ' + el.clientWidth)
    }
  }
  const root = document.documentElement
  if (wide(root)) found.push('the page: ' + root.scrollWidth + ' > ' + root.clientWidth)
  return found
})()`

// What of the keys table a person could not see at once: a status or an action outside the table's box or the
// window, a date on more than one line.
const KEYS_TABLE_FAULTS = `(() => {
  const box = document.querySelector('table').parentElement.getBoundingClientRect()
  const right = Math.min(box.right, window.innerWidth)
  const faults = []
  for (const el of document.querySelectorAll('tbody .badge, tbody button, tbody a.button')) {
    const r = el.getBoundingClientRect()
    if (r.left < box.left || r.right > right) faults.push(el.textContent + ' at ' + r.left + '–' + r.right + ', box ends ' + right)
  }
  for (const el of document.querySelectorAll('tbody time'))
    if (el.getClientRects().length !== 1) faults.push(el.textContent + ' on ' + el.getClientRects().length + ' lines')
  return faults
})()`

// The audit log's changes whose `field: old → new` takes more than one line.
const WRAPPED_CHANGES = `[...document.querySelectorAll('dl.change > div')]
  .filter((el) => el.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(el).lineHeight))
  .map((el) => el.textContent)`

// The side navigation's height and the page's.
const SIDE =
  '[document.querySelector(".side")?.getBoundingClientRect().height ?? 0, document.documentElement.scrollHeight]'

async function run() {
  const { server, link } = await seedDashboard(t)
  const sql = server.db.sql
  const [lead] = await sql<{ id: string }[]>`select id from leads order by created_at limit 1`
  const [hook] = await sql<{ id: string }[]>`select id from webhook_endpoints order by created_at limit 1`
  const [key] = await sql<{ prefix: string }[]>`select prefix from api_keys where rate_limit is not null limit 1`
  // A route's parameter, by its section, filled with a row of the seeded database; a new section's adds its own.
  const ids: Record<string, string> = { keys: key.prefix, leads: lead.id, webhooks: hook.id }
  const deps = { sql, config: server.config, publicUrl: () => server.url } as DashboardDeps
  // Downloads (the CSV exports, a person's JSON export) are no pages to fit.
  const download = (path: string) => path.endsWith('.csv') || path.endsWith('/export')
  const paths = dashboardPages(deps, {} as never)
    .filter((p) => p.method === 'GET' && !download(p.path) && !p.path.includes(':token'))
    .map((p) => p.path.replace(/:\w+/g, () => ids[p.path.split('/')[2]]))

  const context = await openBrowser(t)
  const page = await context.newPage()
  const problems = watchProblems(page, new URL(server.url).origin)
  await page.goto(link)
  await page.getByLabel('New password').fill(PASSWORD)
  await page.getByLabel('Repeat it').fill(PASSWORD)
  await page.getByRole('button', { name: 'Save and sign in' }).click()
  await page.waitForURL(`${server.url}/dashboard/keys`)

  for (const width of [1280, 375]) {
    await t.test(`at ${width}×800`, async (t) => {
      t.ok(paths.length >= 10, `${paths.length} pages`)
      t.notOk(paths.join().includes('undefined'), 'each parameter filled')
      await page.setViewportSize({ width, height: 800 })
      for (const path of paths) {
        const answer = await page.goto(server.url + path)
        t.equal(answer?.status(), 200, `${path} opens`)
        t.same(await page.evaluate(overflows(width < 760)), [], `${path}: no table wider than its box`)
        if (width < 760) continue
        const side = (await page.evaluate(SIDE)) as number[]
        if (!path.startsWith('/dashboard/signin')) t.ok(side[0] >= side[1] - 1, `${path}: the navigation runs ${side}`)
      }
    })
  }

  await t.test('at 1280 the keys table shows status, actions and one-line dates', async (t) => {
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(`${server.url}/dashboard/keys`)
    // One created date per key at least; last-used dates appear when the batched usage flush has run.
    t.ok((await page.locator('tbody time').count()) >= 4, 'dates in <time>')
    t.equal(await page.locator('tbody tr', { hasText: 'active' }).count(), 4)
    t.same(await page.evaluate(KEYS_TABLE_FAULTS), [])
  })
  await t.test('at 1280 the audit log shows each change on a line of its own', async (t) => {
    await page.goto(`${server.url}/dashboard/audit`)
    t.ok((await page.locator('dl.change > div').count()) >= 5, 'changes listed')
    t.same(await page.evaluate(WRAPPED_CHANGES), [])
  })
  t.same(problems, [], 'no script error, dialog or foreign request')
}

if (needsChromium(t)) await run()
