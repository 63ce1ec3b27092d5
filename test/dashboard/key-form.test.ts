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

t.test('the CAPTCHA field: set, the secret never echoed, kept when left empty, refused in words', async (t) => {
  const SECRET = 'dash-captcha-secret-0x4AAAAAAA'
  const captchaOf = async () =>
    (await sql`select captcha_provider, captcha_secret, captcha_min_score from api_keys where prefix = ${prefix}`)[0]
  const set = await owner.submit(path, `/dashboard/keys/${prefix}/captcha`, {
    captcha: 'recaptcha',
    captcha_secret: SECRET,
    min_score: '0.5',
  })
  t.equal(set.status, 303)
  t.same(await captchaOf(), { captcha_provider: 'recaptcha', captcha_secret: SECRET, captcha_min_score: 0.5 })
  const page = await owner.get(path)
  t.match(page.text, '<option value="recaptcha" selected>')
  t.match(page.text, 'placeholder="stored; leave empty to keep it"')
  t.notMatch(page.text, SECRET, 'the stored secret is not on the page')
  const kept = await owner.submit(path, `/dashboard/keys/${prefix}/captcha`, {
    captcha: 'turnstile',
    captcha_secret: '',
  })
  t.equal(kept.status, 303)
  t.same(await captchaOf(), { captcha_provider: 'turnstile', captcha_secret: SECRET, captcha_min_score: null })
  const badScore = await owner.submit(path, `/dashboard/keys/${prefix}/captcha`, {
    captcha: 'recaptcha',
    min_score: '3',
  })
  t.equal(badScore.status, 400)
  t.match(badScore.text, 'Minimum score: the minimum score is a number from 0 to 1')
  const other = prefixOf((await cli(['keys', 'create', '--email', OWNER])).key)
  const noSecret = await owner.submit(path, `/dashboard/keys/${other}/captcha`, { captcha: 'hcaptcha' })
  t.equal(noSecret.status, 400)
  t.match(noSecret.text, 'secret key.')
  t.equal((await owner.submit(path, `/dashboard/keys/${prefix}/captcha`, { captcha: 'none' })).status, 303)
  t.same(await captchaOf(), { captcha_provider: null, captcha_secret: null, captcha_min_score: null })
  const audit = await sql`select before::text || after::text as v from audit_log where action = 'key.captcha_changed'`
  t.equal(audit.length, 3)
  t.notOk(
    audit.some((r) => r.v.includes(SECRET)),
    'no audit entry holds the secret'
  )
})

t.test('the autoreply form: saved, shown escaped, refused in words, turned off', async (t) => {
  const autoreplyOf = async () =>
    (await sql`select autoreply_subject, autoreply_body, autoreply_reply_to from api_keys where prefix = ${prefix}`)[0]
  const to = `/dashboard/keys/${prefix}/autoreply`
  const set = await owner.submit(path, to, {
    autoreply: 'on',
    autoreply_subject: 'Thanks <b>{{name}}</b>',
    autoreply_body: 'Hello {{name}},\r\nwe will call.\r\n',
    autoreply_reply_to: 'hello@a.example',
  })
  t.equal(set.status, 303)
  t.same(await autoreplyOf(), {
    autoreply_subject: 'Thanks <b>{{name}}</b>',
    autoreply_body: 'Hello {{name}},\nwe will call.\n',
    autoreply_reply_to: 'hello@a.example',
  })
  const page = await owner.get(path)
  t.match(page.text, 'value="Thanks &lt;b&gt;{{name}}&lt;/b&gt;"')
  t.match(page.text, 'value="hello@a.example"')
  t.match(page.text, 'name="autoreply" value="off"')
  const bad = await owner.submit(path, to, {
    autoreply: 'on',
    autoreply_subject: 'Hi',
    autoreply_body: 'x',
    autoreply_reply_to: 'no',
  })
  t.equal(bad.status, 400)
  t.match(bad.text, 'Autoreply: the Reply-To is not an email address.')
  t.equal((await owner.submit(path, to, { autoreply: 'off' })).status, 303)
  t.same(await autoreplyOf(), { autoreply_subject: null, autoreply_body: null, autoreply_reply_to: null })
  const [entry] = await sql`select actor from audit_log where action = 'key.autoreply_changed' and target = ${prefix}`
  t.equal(entry.actor, OWNER)
})
