import t from 'tap'
import { prefixOf } from '../../src/accounts/key-format.js'
import { cliOn } from '../support/cli.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'

// A lead key's form setting on the dashboard: the checkbox and the thank-you URL, the form URL with a snippet to
// copy (the prefix, never the secret); a bad URL or a key that cannot take forms gets a page and changes nothing.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const { sql } = await openTestDatabase(t, dbEnv)
const cli = cliOn(dbEnv)
const OWNER = 'form-owner@example.com'
const owner = await signInWithLink(server.url, await signinLink(dbEnv, {}, ['--email', OWNER]))
const made = await cli([
  'keys',
  'create',
  '--email',
  OWNER,
  '--scopes',
  'leads:write',
  '--origins',
  'https://a.example',
])
const prefix = prefixOf(made.key)
const plain = prefixOf((await cli(['keys', 'create', '--email', OWNER])).key)
const formOf = async (p: string) => (await sql`select form, thank_you_url from api_keys where prefix = ${p}`)[0]
const path = `/dashboard/keys/${prefix}/form`

t.test(
  'the keys list links a lead key’s form page; the page shows the URL and a snippet, not the secret',
  async (t) => {
    const list = await owner.get('/dashboard/keys')
    t.match(list.text, `href="${path}"`)
    t.notMatch(list.text, `/dashboard/keys/${plain}/form`, 'a key without origins has none')
    const page = await owner.get(path)
    t.equal(page.status, 200)
    t.match(page.text, `<code>${server.url}/forms/${prefix}</code>`)
    t.match(page.text, `&lt;form method=&quot;post&quot; action=&quot;${server.url}/forms/${prefix}&quot;&gt;`)
    t.notMatch(page.text, made.key, 'the secret is not on the page')
  }
)

t.test('saved: open with a thank-you URL, then closed', async (t) => {
  const on = await owner.submit(path, path, { form: 'on', thank_you: 'https://a.example/thanks' })
  t.equal(on.status, 303)
  t.same(await formOf(prefix), { form: true, thank_you_url: 'https://a.example/thanks' })
  t.match((await owner.get(path)).text, /name="form" value="on" checked/)
  t.equal((await owner.submit(path, path, { thank_you: '' })).status, 303)
  t.same(await formOf(prefix), { form: false, thank_you_url: null })
  const [entry] = await sql`select actor from audit_log where action = 'key.form_changed' and target = ${prefix}`
  t.equal(entry.actor, OWNER)
})

t.test('a bad URL or a key that cannot take forms: a page, nothing changed', async (t) => {
  const bad = await owner.submit(path, path, { form: 'on', thank_you: 'javascript:alert(1)' })
  t.equal(bad.status, 400)
  t.match(bad.text, 'Thank-you URL: not an http(s) URL')
  t.same(await formOf(prefix), { form: false, thank_you_url: null })
  const other = `/dashboard/keys/${plain}/form`
  const refused = await owner.submit(other, other, { form: 'on' })
  t.equal(refused.status, 400)
  t.same(await formOf(plain), { form: false, thank_you_url: null })
})
