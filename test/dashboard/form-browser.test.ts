import t from 'tap'
import { setKeyForm } from '../../src/accounts/key-form.js'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { needsChromium, openBrowser } from '../support/browser.js'
import { serveStatic } from '../support/static-site.js'
import { issuedKeys, startTestServer } from '../support/server.js'

// A static page on another origin with a plain <form> and no script, submitted by Chromium as a person would: it
// lands on the service's thank-you page, then on the `_next` page; the same page on an origin the key does not name
// is refused; a foreign `_next` ends on the service's own page; the honeypot keeps a lead as spam; a file gets 415;
// an invalid form the page listing its problems.
if (needsChromium(t)) await run()

// The form of docs/forms.md, with `extra` inputs before its button.
function formHtml(action: string, extra = '') {
  const type = extra.includes('type="file"') ? 'multipart/form-data' : 'application/x-www-form-urlencoded'
  return `<!doctype html><html><body><h1>Contact</h1>
<form method="post" action="${action}" enctype="${type}">
  <label>Name <input name="name" required></label>
  <label>Email <input name="email" type="email"></label>
  <input type="hidden" name="service" value="Hosting">
  <label>Message <textarea name="message"></textarea></label>
  <label>Team size <input name="team_size"></label>
  <input type="hidden" name="utm_source" value="newsletter">
  <input name="website" tabindex="-1" autocomplete="off" hidden>
  ${extra}
  <button>Send</button>
</form></body></html>`
}

async function run() {
  const server = await startTestServer(t, { STUDIO_LEAD_KEY_ADDRESS_LIMIT: '100' })
  const { sql } = server.db
  let html = ''
  const site = await serveStatic(t, () => html)
  const other = await serveStatic(t, () => html)
  const made = await createKey(sql, { email: 'owner@example.com', scopes: ['leads:write'], origins: [site] })
  issuedKeys.push(made.key)
  await setKeyForm(sql, { prefix: made.prefix, change: { open: true } })
  const action = `${server.url}/forms/${made.prefix}`
  const leads = () =>
    sql<{ name: string; spam: boolean; fields: unknown; utm_source: string | null }[]>`
      select name, spam, fields, utm_source from leads where key_prefix = ${made.prefix} order by created_at`

  const context = await openBrowser(t)
  const page = await context.newPage()

  async function send(
    origin: string,
    name: string,
    options: { message?: string; extra?: string; fill?: () => Promise<void> } = {}
  ) {
    html = formHtml(action, options.extra)
    await page.goto(`${origin}/contact.html`)
    await page.getByLabel('Name').fill(name)
    await page.getByLabel('Email').fill('ada@example.com')
    await page.getByLabel('Message').fill(options.message ?? 'Please call me back.')
    await page.getByLabel('Team size').fill('12')
    await options.fill?.()
    const answered = page.waitForNavigation()
    await page.getByRole('button', { name: 'Send' }).click()
    const response = await answered
    return { status: response?.status(), url: page.url(), text: (await page.textContent('body')) ?? '' }
  }

  await t.test('the plain form lands on the thank-you page; the lead has its fields and UTM', async (t) => {
    const sent = await send(site, 'Ada Lovelace')
    t.equal(sent.status, 200)
    t.equal(sent.url, action)
    t.match(sent.text, 'Thank you')
    t.equal(await page.getByRole('link', { name: /Back to the site/ }).getAttribute('href'), `${site}/`)
    t.match(await leads(), [
      { name: 'Ada Lovelace', spam: false, fields: { team_size: '12' }, utm_source: 'newsletter' },
    ])
  })

  await t.test('with _next on the site: the browser ends on that page', async (t) => {
    const sent = await send(site, 'Grace', { extra: `<input type="hidden" name="_next" value="${site}/thanks.html">` })
    t.equal(sent.url, `${site}/thanks.html`)
  })

  await t.test('_next to a foreign origin: the service’s own page', async (t) => {
    const sent = await send(site, 'Foreign next', {
      extra: '<input type="hidden" name="_next" value="https://evil.example/">',
    })
    t.equal(sent.url, action)
    t.match(sent.text, 'Thank you')
  })

  await t.test('the same page on an origin the key does not name: refused, nothing stored', async (t) => {
    const sent = await send(other, 'Mallory')
    t.equal(sent.status, 403)
    t.match(sent.text, 'may only be sent from the website it belongs to')
    t.notOk((await leads()).some((l) => l.name === 'Mallory'))
  })

  await t.test('the honeypot filled: thanked, kept as spam', async (t) => {
    const sent = await send(site, 'Spam Bot', {
      fill: () =>
        page.locator('input[name=website]').evaluate((e) => void ((e as unknown as { value: string }).value = 'x')),
    })
    t.match(sent.text, 'Thank you')
    t.match(
      (await leads()).find((l) => l.name === 'Spam Bot'),
      { spam: true }
    )
  })

  await t.test('a file: 415, a page saying files are not taken', async (t) => {
    const sent = await send(site, 'With file', {
      extra: '<label>CV <input type="file" name="cv"></label>',
      fill: () =>
        page.getByLabel('CV').setInputFiles({ name: 'cv.txt', mimeType: 'text/plain', buffer: Buffer.from('hi') }),
    })
    t.equal(sent.status, 415)
    t.match(sent.text, 'takes no files')
    t.notOk((await leads()).some((l) => l.name === 'With file'))
  })

  await t.test('an invalid form: the page lists the problems and links back', async (t) => {
    const sent = await send(site, 'Bad', { message: '   ' })
    t.equal(sent.status, 422)
    t.match(sent.text, 'message: must not be blank')
    t.equal(await page.getByRole('link', { name: /Back to the form/ }).getAttribute('href'), `${site}/`)
  })

  await t.test('the pages fit at 375 px', async (t) => {
    await page.setViewportSize({ width: 375, height: 700 })
    await send(site, 'Narrow', { message: ' ' })
    const wide = await page.evaluate<number>('document.documentElement.scrollWidth')
    t.ok(wide <= 375, `scroll width ${wide}`)
  })
}
