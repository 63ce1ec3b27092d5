import t from 'tap'
import { needsChromium, signedInBrowser } from '../support/browser.js'
import { eventually } from '../support/eventually.js'
import { leadPoster } from '../support/lead-places.js'
import { receiver } from '../support/receiver.js'

// A lead's page driven in a real browser as a person would: the lead shows as unread in the list, its status and
// assignee change with the form, a note is added; a webhook receiver gets each change as lead.updated. Then it is
// erased after its confirmation page, and so is every lead from another address.
if (needsChromium(t)) await run()

async function run() {
  const { server, page, problems, url } = await signedInBrowser(t, 'owner@example.com')
  const hook = await receiver(t)
  const key = await server.key({ email: 'owner@example.com', keyName: 'site' })
  const send = (name: string, email: string) => leadPoster(server, key)({ name, email, message: 'A quote, please' })
  const id = await send('Ada Lovelace', 'ada@example.com')
  const stored = async (lead: string) => (await server.fetch(`/api/v1/leads/${lead}`, { key })).status === 200

  await t.test('set up: a colleague on the Team page, an endpoint for lead.updated', async (t) => {
    await page.getByRole('link', { name: 'Team' }).click()
    await page.getByLabel('Email').fill('bo@example.com')
    await page.getByRole('button', { name: 'Create sign-in link' }).click()
    t.match(await page.textContent('main'), 'A sign-in link for bo@example.com')
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.getByLabel('Endpoint URL').fill(hook.url)
    await page.getByLabel('Only these:').check()
    await page.getByLabel('lead.updated').check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    t.match(await page.textContent('main'), 'Copy it now')
  })

  await t.test('the list shows the lead unread; its page opens it', async (t) => {
    await page.getByRole('link', { name: 'Leads', exact: true }).click()
    const row = page.locator('tr', { hasText: 'Ada Lovelace' })
    t.match(await row.textContent(), /unread.*ada@example\.com.*new/s)
    await page.getByRole('link', { name: 'Ada Lovelace' }).click()
    await page.waitForURL(url(`/dashboard/leads/${id}`))
    await page.getByRole('link', { name: '← Leads' }).click()
    t.notMatch(await row.textContent(), 'unread', 'opened now')
    await row.getByRole('link', { name: 'Ada Lovelace' }).click()
  })

  await t.test('status and assignee: chosen and saved; the receiver gets lead.updated', async (t) => {
    await page.getByLabel('Status').selectOption('contacted')
    await page.getByLabel('Assigned to').selectOption('bo@example.com')
    await page.getByRole('button', { name: 'Save' }).click()
    t.match(await page.getByRole('status').textContent(), 'were saved')
    t.equal(await page.getByLabel('Status').inputValue(), 'contacted')
    t.equal(await page.getByLabel('Assigned to').inputValue(), 'bo@example.com')
    await eventually(() => hook.got.length === 1, { what: 'lead.updated at the receiver' })
    const event = JSON.parse(hook.got[0].body) as { type: string; data: Record<string, unknown> }
    t.equal(event.type, 'lead.updated')
    t.match(event.data, {
      id,
      who: 'owner@example.com',
      changes: {
        status: { before: 'new', after: 'contacted' },
        assignee: { before: null, after: 'bo@example.com' },
      },
    })
  })

  await t.test('a note: typed, added, listed with its author and time', async (t) => {
    t.match(await page.textContent('main'), 'No notes yet')
    await page.getByLabel('Add a note').fill('Called her: wants a quote by Friday.')
    await page.getByRole('button', { name: 'Add note' }).click()
    t.match(await page.getByRole('status').textContent(), 'The note was added')
    t.match(
      await page.locator('ol.notes li').textContent(),
      /owner@example\.com · \d{4}-\d\d-\d\d \d\d:\d\d UTC\s*Called her: wants a quote by Friday\./
    )
  })

  await t.test('the list filters by the new status and by "me"', async (t) => {
    await page.getByRole('link', { name: '← Leads' }).click()
    await page.getByLabel('Status').selectOption('contacted')
    await page.getByRole('button', { name: 'Filter' }).click()
    t.match(await page.textContent('main'), 'Ada Lovelace')
    t.match(page.url(), 'status=contacted')
    await page.getByLabel('Assigned to').selectOption('me')
    await page.getByRole('button', { name: 'Filter' }).click()
    t.match(await page.textContent('main'), 'No lead matches', 'it is given to bo, not to me')
  })

  await t.test('Erase asks first, on a page of its own; Cancel keeps the lead', async (t) => {
    await page.goto(url(`/dashboard/leads/${id}`))
    await page.getByRole('button', { name: 'Erase', exact: true }).click()
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Erase the lead from Ada Lovelace?')
    t.match(await page.textContent('main'), 'This cannot be undone.')
    await page.getByRole('link', { name: 'Cancel' }).click()
    await page.waitForURL(url(`/dashboard/leads/${id}`))
    t.ok(await stored(id), 'nothing erased')
  })

  await t.test('Erase, confirmed: the list says so and the lead is gone', async (t) => {
    await page.getByRole('button', { name: 'Erase', exact: true }).click()
    await page.getByRole('button', { name: 'Erase the lead' }).click()
    await page.waitForURL(url('/dashboard/leads?done=lead-erased'))
    t.match(await page.getByRole('status').textContent(), 'The lead was erased')
    t.notMatch(await page.textContent('main'), 'Ada Lovelace')
    t.notOk(await stored(id), 'the read API has it no more')
  })

  await t.test('Erase every lead from this address: each of them, no other', async (t) => {
    const grace = [await send('Grace Hopper', 'grace@example.com'), await send('G. Hopper', 'Grace@Example.com')]
    const kept = await send('Alan Turing', 'alan@example.com')
    await page.goto(url(`/dashboard/leads/${grace[0]}`))
    await page.getByRole('button', { name: 'Erase every lead from this address' }).click()
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Erase every lead from grace@example.com?')
    t.match(await page.textContent('main'), 'all 2 of its leads')
    await page.getByRole('button', { name: 'Erase every lead from this address' }).click()
    await page.waitForURL(url('/dashboard/leads?done=leads-erased'))
    t.match(await page.getByRole('status').textContent(), 'Every lead from that address was erased')
    const list = await page.textContent('main')
    t.notMatch(list, 'Hopper')
    t.match(list, 'Alan Turing')
    t.same([await stored(grace[0]), await stored(grace[1]), await stored(kept)], [false, false, true])
  })

  t.test('no console errors, no failed requests', async (t) => t.same(problems, []))
}
