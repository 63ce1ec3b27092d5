import t from 'tap'
import { prefixOf } from '../../src/accounts/key-format.js'
import { needsChromium, openBrowser, watchProblems } from '../support/browser.js'
import { cliOn } from '../support/cli.js'
import { PASSWORD, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { anthropicMessage, fakeUpstream, json } from '../support/fake-upstream.js'
import { startTestServer } from '../support/server.js'

// Spend where people see it (issue 45): the Usage page in Chromium (a spend series on its chart, spend per key, per
// model and per upstream, the month's spend against the budget), its CSV of the month's calls, `studio usage`, and the
// spend counter on /metrics. A model with no price says "no price", never 0.
if (needsChromium(t)) await run()

async function run() {
  const dbEnv = await testDatabase(t)
  const usage = { input_tokens: 12, output_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
  const upstream = await fakeUpstream(t, json(200, anthropicMessage({ usage })))
  const server = await startTestServer(
    t,
    {
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: upstream.url,
      STUDIO_MODEL_FAST: 'my-unpriced-model',
      STUDIO_METRICS_PORT: '0',
    },
    { dbEnv }
  )
  const env = { STUDIO_PUBLIC_URL: server.url }
  const url = (path: string) => `${server.url}${path}`
  const cli = cliOn({ ...dbEnv, ...env })
  const OWNER = 'spend-owner@example.com'
  const context = await openBrowser(t)
  const page = await context.newPage()
  const problems = watchProblems(page, new URL(server.url).origin)
  await page.goto(await signinLink(dbEnv, env, ['--email', OWNER]))
  await page.getByLabel('New password').fill(PASSWORD)
  await page.getByLabel('Repeat it').fill(PASSWORD)
  await page.getByRole('button', { name: 'Save and sign in' }).click()
  await page.waitForURL(url('/dashboard/keys'))

  const key = (await cli(['keys', 'create', '--email', OWNER, '--key-name', 'spender'])).key
  const prefix = prefixOf(key)
  const call = (model: string) =>
    server.fetch('/api/v1/ai/completions', {
      method: 'POST',
      key,
      json: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 },
    })
  // claude-sonnet-4-5: 12 input tokens at 3 and 100 output at 15 USD per million = 1536 micro-dollars a call.
  const COST = 12 * 3 + 100 * 15
  await t.test('three calls, one to a model with no price, and a budget', async (t) => {
    t.equal((await call('fast')).status, 200, 'a call to a model with no price')
    t.equal((await call('primary')).status, 200)
    t.equal((await call('primary')).status, 200)
    t.equal((await cli(['budget', 'set', '--email', OWNER, '25.00'])).code, 0)
    const recorded = async () => {
      const [r] = await server.db.sql`select count(*)::int as n from completions where key_prefix = ${prefix}`
      return r.n === 3 || undefined
    }
    await eventually(recorded, { what: 'the three calls recorded' })
  })
  const spent = (2 * COST) / 1e6

  await t.test('the Usage page: spend per day, key, model and upstream, and the budget bar', async (t) => {
    await page.getByRole('link', { name: 'Usage' }).click()
    await page.waitForURL(url('/dashboard/usage'))
    t.equal(await page.locator('svg path.cost').count(), 1, 'a spend series on the chart')
    t.match(await page.locator('svg circle.cost title').first().textContent(), `spent ${spent.toFixed(6)} + 1 no price`)
    t.match(await page.locator('.legend').textContent(), `at most ${spent.toFixed(6)} USD on one day`)
    const rowOf = (table: string, cell: string) =>
      page.locator(`h2:text-is("${table}") + .table-wrap tr`, { hasText: cell }).first().textContent()
    t.match(await rowOf('By key', prefix), `${spent.toFixed(6)} + 1 no price`)
    t.match(await rowOf('By model', 'claude-sonnet-4-5'), spent.toFixed(6))
    t.match(await rowOf('By model', 'my-unpriced-model'), 'no price')
    t.notMatch(await rowOf('By model', 'my-unpriced-model'), '0.000000')
    t.match(await rowOf('By upstream', 'anthropic'), `${spent.toFixed(6)} + 1 no price`)
    const budget = await page.locator('.card', { has: page.locator('h2:text-is("Budget")') }).textContent()
    t.match(budget, `${spent.toFixed(6)} USD spent`)
    t.match(budget, /of\s+25\.000000/)
    t.match(budget, '24.996928 remaining')
    const bar = page.locator(`svg[aria-label="${spent.toFixed(6)} of 25.000000 USD spent"] rect.bar`)
    t.equal(await bar.getAttribute('width'), String(Math.round((spent / 25) * 1000)), 'the bar as long as the share')
  })

  for (const width of [1280, 375]) {
    await t.test(`its tables fit at ${width} px`, async (t) => {
      await page.setViewportSize({ width, height: 800 })
      await page.goto(url('/dashboard/usage'))
      const wide = await page.evaluate(`(() => {
        const found = []
        for (const table of document.querySelectorAll('table')) {
          const box = table.parentElement
          const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
          if (box.scrollWidth > box.clientWidth && !(${width < 500} && scrolls)) found.push(table.textContent.slice(0, 40))
        }
        const root = document.documentElement
        if (root.scrollWidth > root.clientWidth) found.push('the page')
        return found
      })()`)
      t.same(wide, [])
    })
  }

  await t.test('the CSV of the month: downloaded from the page, and over HTTP with its headers', async (t) => {
    await page.setViewportSize({ width: 1280, height: 800 })
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export calls (CSV)' }).click(),
    ])
    t.match(download.suggestedFilename(), /^calls-\d{4}-\d{2}\.csv$/)
    const r = await context.request.get(url('/dashboard/usage.csv'))
    t.equal(r.status(), 200)
    t.match(r.headers()['content-type'], /^text\/csv/)
    t.match(r.headers()['content-disposition'], /^attachment; filename="calls-\d{4}-\d{2}\.csv"$/)
    const lines = (await r.text()).split('\r\n').filter(Boolean)
    t.equal(
      lines[0],
      'time,key,model,upstream,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,cost_usd,outcome'
    )
    t.equal(lines.length, 4)
    const rows = lines.slice(1).map((l) => l.split(','))
    t.match(rows[0], [/^\d{4}-\d{2}-\d{2}T/, prefix, 'my-unpriced-model', 'anthropic', '12', '100', '0', '0', '', 'ok'])
    t.match(rows[1], [/Z$/, prefix, 'claude-sonnet-4-5', 'anthropic', '12', '100', '0', '0', (COST / 1e6).toFixed(6)])
    const bad = await context.request.get(url('/dashboard/usage.csv?month=2020-01'))
    t.equal((await bad.text()).split('\r\n').filter(Boolean).length, 1, 'another month: the header alone')
  })

  await t.test('studio usage prints the cost columns', async (t) => {
    const all = await cli(['usage'])
    t.equal(all.code, 0)
    t.match(all.out.join('\n'), `${spent.toFixed(6)} + 1 no price`)
    const byModel = await cli(['usage', '--by', 'model'])
    t.match(byModel.out.join('\n'), /claude-sonnet-4-5\t2\t0\t24\t200\t0\.003072/)
    t.match(byModel.out.join('\n'), /my-unpriced-model\t1\t0\t12\t100\tno price/)
  })

  await t.test('the spend counter on /metrics, in micro-dollars', async (t) => {
    const text = await (await fetch(`${server.metricsUrl}/metrics`)).text()
    t.match(text, '# HELP studio_spend_micro_usd_total Spend on completions in micro-dollars')
    t.match(text, `studio_spend_micro_usd_total{model="claude-sonnet-4-5",key_prefix="${prefix}"} ${2 * COST}`)
    t.notMatch(text, 'my-unpriced-model', 'a call with no price is not counted as 0')
  })

  t.test('no browser problems', async (t) => t.same(problems, []))
}
