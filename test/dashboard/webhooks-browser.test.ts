import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { needsChromium, signedInBrowser } from '../support/browser.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'

// The Webhooks section driven in a real browser (Debian's Chromium) as a person would, against a real HTTP receiver:
// add an endpoint, copy its secret (shown once), send a test event, read the delivery log, resend.
if (needsChromium(t)) await run()

async function run() {
  const { page, problems, url } = await signedInBrowser(t, 'hooks@example.com')
  const hook = await receiver(t, (_, res) => res.end('received, thanks'))

  let secret = ''
  await t.test('add an endpoint; its secret is shown once', async (t) => {
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.waitForURL(url('/dashboard/webhooks'))
    t.match(await page.textContent('main'), 'No endpoints yet')
    await page.getByLabel('Endpoint URL').fill(hook.url)
    await page.getByLabel('Only these:').check()
    await page.getByLabel('lead.created').check()
    await page.getByLabel('Description (optional)').fill('CRM sync')
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    secret = (await page.textContent('#new-secret')) ?? ''
    t.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/)
    await page.goto(url('/dashboard/webhooks'))
    const list = await page.content()
    t.notMatch(list, secret, 'never shown again')
    t.match(await page.locator('tr', { hasText: hook.url }).textContent(), /lead\.created.*enabled.*none yet/s)
  })

  await t.test('send a test event: it arrives signed with that secret and shows in the delivery log', async (t) => {
    await page.getByRole('link', { name: hook.url }).click()
    await page.getByRole('button', { name: 'Send test event' }).click()
    t.match(await page.getByRole('status').textContent(), 'A test event is on its way')
    await eventually(() => hook.got.length === 1, { what: 'the test event at the receiver' })
    const [got] = hook.got
    const event = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string }
    t.equal(event.type, 'webhook.test')
    const id = got.headers['webhook-id'] as string
    const row = page.locator('table.log tr', { hasText: id })
    await eventually(
      async () => {
        await page.reload()
        return (await row.count()) === 1 && /200/.test((await row.textContent()) ?? '')
      },
      { what: 'the attempt in the log' }
    )
    t.match(await row.textContent(), /webhook\.test.*delivered.*200.*\d+ ms.*received, thanks/s)
    t.notMatch(await page.content(), secret, 'not on the endpoint page either')
  })

  await t.test('Resend: the event arrives again with the same webhook-id; the log shows both attempts', async (t) => {
    const id = hook.got[0].headers['webhook-id'] as string
    await page.getByRole('button', { name: `Resend ${id}` }).click()
    t.match(await page.getByRole('status').textContent(), 'sent again')
    await eventually(() => hook.got.length === 2, { what: 'the event sent again' })
    t.equal(hook.got[1].headers['webhook-id'], id)
    t.equal(hook.got[1].body, hook.got[0].body)
    t.doesNotThrow(() => new Webhook(secret).verify(hook.got[1].body, hook.got[1].headers as Record<string, string>))
    await eventually(
      async () => {
        await page.reload()
        return (await page.locator('table.log td.num').count()) === 2
      },
      { what: 'two attempts in the log' }
    )
    t.same(problems, [], 'no dialog, console error or foreign request')
  })
}
