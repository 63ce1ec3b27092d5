import t from 'tap'
import { SCOPES } from '../../src/accounts/scopes.js'
import { Browser, csrfOf, PASSWORD, signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'

const dbEnv = await testDatabase(t)
const server = await startTestServer(t, {}, { dbEnv })
const env = { STUDIO_PUBLIC_URL: server.url }
// GET /me with the key until it is refused (servers poll for revocations twice a second), or 3 s have passed: the
// first status other than 200.
const refused = (key: string) =>
  eventually(
    async () => {
      const { status } = await server.fetch('/api/v1/me', { key })
      return status !== 200 && status
    },
    { timeout: 3000, what: 'GET /me refused' }
  )
const link = (email: string, ...more: string[]) => signinLink(dbEnv, env, ['--email', email, ...more])

t.test('pages carry the security headers; / and /dashboard redirect; signed out means the sign-in page', async (t) => {
  const b = new Browser(server.url)
  const page = await b.get('/dashboard/signin')
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  const csp = page.headers.get('content-security-policy') ?? ''
  for (const part of ["script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"])
    t.match(csp, part)
  t.notMatch(csp, 'unsafe-inline')
  t.equal(page.headers.get('referrer-policy'), 'no-referrer')
  t.equal(page.headers.get('cache-control'), 'no-store')
  t.notMatch(page.text, /<script>|style="/)
  t.equal((await b.get('/')).headers.get('location'), '/dashboard/keys')
  t.equal((await b.get('/dashboard')).headers.get('location'), '/dashboard/keys')
  for (const path of ['/dashboard/keys', '/dashboard/leads', '/dashboard/usage', '/dashboard/account']) {
    const r = await b.get(path)
    t.equal(r.status, 303, path)
    t.equal(r.headers.get('location'), '/dashboard/signin')
  }
  const css = await b.get('/dashboard/assets/style.css')
  t.match(css.headers.get('content-type'), /^text\/css/)
  t.match(css.text, 'prefers-color-scheme')
  const missing = await b.get('/dashboard/nowhere')
  t.equal(missing.status, 404)
  t.match(missing.headers.get('content-type'), /^text\/html/)
  t.match(missing.text, missing.headers.get('x-request-id') ?? 'none')
  t.equal((await server.fetch('/api/v1/me')).status, 401, 'the API is unchanged')
})

t.test('a sign-in link: single use, sets a password, a session cookie with its flags', async (t) => {
  const url = await link('ada@example.com', '--name', 'Ada')
  t.match(url, new RegExp(`^${server.url}/dashboard/link/[\\w-]{43}$`))
  const path = new URL(url).pathname
  const b = new Browser(server.url)
  const form = await b.get(path)
  t.equal(form.status, 200)
  t.match(form.text, 'ada@example.com')
  const short = await b.post(path, { password: 'short', confirm: 'short' })
  t.equal(short.status, 422)
  t.match(short.text, 'at least 12')
  const set = await b.post(path, { password: PASSWORD, confirm: PASSWORD })
  t.equal(set.status, 303)
  t.equal(set.headers.get('location'), '/dashboard/keys')
  const cookie = set.headers.get('set-cookie') ?? ''
  t.match(cookie, /^studio_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000$/)
  t.equal((await b.get('/dashboard/keys')).status, 200)
  t.equal((await new Browser(server.url).get(path)).status, 404, 'a link works once')
  t.notOk(
    server.log.lines.some((l) => l.includes(path.split('/').at(-1) ?? '?')),
    'the token is never logged'
  )
  const out = await b.submit('/dashboard/keys', '/dashboard/signout')
  t.equal(out.status, 303)
  t.equal(b.cookie, '')
  t.equal((await b.get('/dashboard/keys')).status, 303)
})

t.test('sign in with email and password; the same answer for a wrong email and a wrong password', async (t) => {
  await signInWithLink(server.url, await link('grace@example.com'))
  const b = new Browser(server.url)
  const wrongPassword = await b.post('/dashboard/signin', { email: 'grace@example.com', password: 'not the password' })
  const wrongEmail = await b.post('/dashboard/signin', { email: 'nobody@example.com', password: 'not the password' })
  t.equal(wrongPassword.status, 401)
  t.equal(wrongEmail.status, 401)
  const message = (s: string) => /role="alert">([^<]*)</.exec(s)?.[1]
  t.equal(message(wrongPassword.text), message(wrongEmail.text))
  const ok = await b.post('/dashboard/signin', { email: 'GRACE@example.com', password: PASSWORD })
  t.equal(ok.status, 303)
  t.equal((await b.get('/dashboard/account')).status, 200)
})

t.test('sign-in attempts are limited per email', async (t) => {
  let last = 0
  for (let i = 0; i < 11; i++) {
    const b = new Browser(server.url)
    last = (await b.post('/dashboard/signin', { email: 'target@example.com', password: `guess ${i} guess` })).status
  }
  t.equal(last, 429)
})

t.test('a POST from another site, or without the CSRF token, is refused and changes nothing', async (t) => {
  const b = await signInWithLink(server.url, await link('csrf@example.com'))
  const csrf = csrfOf((await b.get('/dashboard/keys')).text)
  const tries = [
    await b.post('/dashboard/keys', { csrf, name: 'evil' }, 'https://evil.example'),
    await b.post('/dashboard/keys', { csrf, name: 'evil' }, null),
    await b.post('/dashboard/keys', { name: 'evil' }),
    await b.post('/dashboard/keys', { csrf: 'x', name: 'evil' }),
  ]
  // Under Referrer-Policy: no-referrer a browser sends Origin: null; only its Sec-Fetch-Site then says where from.
  const nullOrigin = (site: string) =>
    fetch(`${server.url}/dashboard/keys`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: b.cookie, origin: 'null', 'sec-fetch-site': site },
      body: new URLSearchParams({ csrf, name: 'evil' }),
    })
  const crossSite = await nullOrigin('cross-site')
  tries.push({ status: crossSite.status, text: await crossSite.text(), headers: crossSite.headers })
  const fromSite = await nullOrigin('same-origin')
  t.equal(fromSite.status, 200, 'Origin: null from the same origin')
  await fromSite.text()
  for (const r of tries) {
    t.equal(r.status, 403)
    t.match(r.headers.get('content-type'), /^text\/html/)
  }
  t.equal((await b.get('/dashboard/keys')).text.match(/evil/g)?.length, 1, 'only the same-origin one')
  t.equal((await new Browser(server.url).post('/dashboard/keys', { name: 'x' })).status, 403, 'no session')
})

t.test('keys: create (shown once), use, rotate with grace, revoke after a confirmation', async (t) => {
  const b = await signInWithLink(server.url, await link('keys@example.com'))
  const created = await b.submit('/dashboard/keys', '/dashboard/keys', { name: 'prod <server>', expires: '30' })
  t.equal(created.status, 200)
  const key = /id="new-key">([^<]+)</.exec(created.text)?.[1] ?? ''
  t.match(key, /^studio_\w{12}_\w{28}$/)
  t.match(created.text, 'prod &lt;server&gt;')
  const list = await b.get('/dashboard/keys')
  t.notMatch(list.text, key, 'never shown again')
  const prefix = key.split('_')[1]
  t.match(list.text, prefix)
  t.equal((await server.fetch('/api/v1/me', { key })).status, 200)
  const ask = await b.get(`/dashboard/keys/${prefix}/rotate`)
  t.equal(ask.status, 200)
  t.match(ask.text, '<label for="grace">Old key keeps working for</label>')
  t.match(ask.text, '<option value="86400" selected>24 hours</option>', '24 hours unless changed, as the CLI')
  t.equal((await server.fetch('/api/v1/me', { key })).status, 200, 'not rotated before the confirmation')
  const noGrace = await b.post(`/dashboard/keys/${prefix}/rotate`, { csrf: csrfOf(ask.text) })
  t.equal(noGrace.status, 400)
  t.match(noGrace.text, 'Pick how long the old key keeps working.')
  const rotated = await b.post(`/dashboard/keys/${prefix}/rotate`, { csrf: csrfOf(ask.text), grace: '3600' })
  t.equal(rotated.status, 200)
  const next = /id="new-key">([^<]+)</.exec(rotated.text)?.[1] ?? ''
  t.not(next, key)
  t.match((await b.get('/dashboard/keys')).text, 'in grace')
  t.equal((await server.fetch('/api/v1/me', { key })).status, 200, 'the old key works during the grace')
  const nextPrefix = next.split('_')[1]
  const confirm = await b.submit('/dashboard/keys', `/dashboard/keys/${nextPrefix}/revoke`)
  t.equal(confirm.status, 200)
  t.match(confirm.text, 'Revoke the key')
  t.equal((await server.fetch('/api/v1/me', { key: next })).status, 200, 'not revoked before the confirmation')
  const done = await b.post(`/dashboard/keys/${nextPrefix}/revoke`, { csrf: csrfOf(confirm.text), confirm: 'yes' })
  t.equal(done.status, 303)
  t.equal(await refused(next), 401)
  t.notOk(
    server.log.lines.some((l) => l.includes(key) || l.includes(next)),
    'no key in the log'
  )
})

t.test('keys: the create form sets scopes, the list shows them by name', async (t) => {
  const b = await signInWithLink(server.url, await link('scoped@example.com'))
  const page = await b.get('/dashboard/keys')
  t.equal(
    page.text.match(/type="checkbox" name="scope" value="[a-z:]+" checked/g)?.length,
    SCOPES.length,
    'all, checked'
  )
  const made = await b.submit('/dashboard/keys', '/dashboard/keys', {
    name: 'form handler',
    scopes: 'chosen',
    scope: ['leads:write', 'me:read'],
  })
  t.equal(made.status, 200)
  const key = /id="new-key">([^<]+)</.exec(made.text)?.[1] ?? ''
  const lead = { name: 'A', email: 'a@example.com', service: 's', message: 'm' }
  t.equal((await server.fetch('/api/v1/leads', { method: 'POST', key, json: lead })).status, 201)
  t.equal((await server.fetch('/api/v1/me', { key })).status, 200)
  const ai = await server.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [] } })
  t.equal(ai.status, 403, 'completions:write was not checked')
  const all = await b.submit('/dashboard/keys', '/dashboard/keys', { name: 'everything' })
  t.equal(all.status, 200, 'a form without the choice gets every scope')
  const list = (await b.get('/dashboard/keys')).text
  const rowOf = (prefix: string) => list.slice(list.indexOf(prefix)).split('</tr>')[0]
  t.match(rowOf(key.split('_')[1]), /<code>me:read<\/code>\s*<code>leads:write<\/code>\s*<\/td>/)
  const everything = /id="new-key">([^<]+)</.exec(all.text)?.[1] ?? ''
  t.match(rowOf(everything.split('_')[1]), new RegExp(SCOPES.join('.*'), 's'), 'every scope by name')
  const refusals: [Record<string, string | string[]>, string][] = [
    [{ name: 'none', scopes: 'chosen' }, 'Pick one or more scopes'],
    [{ name: 'odd', scopes: 'chosen', scope: ['admin', 'me:read'] }, 'There is no scope admin'],
  ]
  for (const [form, message] of refusals) {
    const refused = await b.submit('/dashboard/keys', '/dashboard/keys', form)
    t.equal(refused.status, 400)
    t.match(refused.headers.get('content-type'), /^text\/html/)
    t.match(refused.text, message)
  }
  t.notMatch((await b.get('/dashboard/keys')).text, /none|odd/, 'no key was made')
})

t.test('roles: a member sees and manages only their own keys and cannot reach Team', async (t) => {
  const owner = await signInWithLink(server.url, await link('boss@example.com'))
  const mine = await owner.submit('/dashboard/keys', '/dashboard/keys', { name: 'owner key' })
  const ownerPrefix = (/id="new-key">([^<]+)</.exec(mine.text)?.[1] ?? '').split('_')[1]
  const invited = await owner.submit('/dashboard/team', '/dashboard/team', {
    email: 'minion@example.com',
    role: 'member',
  })
  t.equal(invited.status, 200)
  const memberLink = /id="new-link">([^<]+)</.exec(invited.text)?.[1] ?? ''
  const member = await signInWithLink(server.url, memberLink)
  const keys = await member.get('/dashboard/keys')
  t.notMatch(keys.text, ownerPrefix)
  t.notMatch(keys.text, 'href="/dashboard/team"')
  t.equal((await member.get('/dashboard/team')).status, 403)
  const revoke = await member.post(`/dashboard/keys/${ownerPrefix}/revoke`, { csrf: csrfOf(keys.text), confirm: 'yes' })
  t.equal(revoke.status, 404)
  t.match((await owner.get('/dashboard/keys')).text, /badge active/)
  const own = await member.submit('/dashboard/keys', '/dashboard/keys', { name: 'member key' })
  t.equal(own.status, 200)
  t.match((await owner.get('/dashboard/keys')).text, 'member key', 'the owner sees the member key')
})

t.test('team: roles change, the last owner is protected, a removed user loses their keys', async (t) => {
  const owner = await signInWithLink(server.url, await link('solo@example.com'))
  const team = await owner.get('/dashboard/team')
  const ownerId = /action="\/dashboard\/team\/([\w-]+)\/role"/.exec(team.text)?.[1] ?? ''
  const demote = await owner.post(`/dashboard/team/${ownerId}/role`, { csrf: csrfOf(team.text), role: 'member' })
  t.equal(demote.status, 400)
  t.match(demote.text, 'last owner')
  const invited = await owner.submit('/dashboard/team', '/dashboard/team', {
    email: 'helper@example.com',
    role: 'admin',
  })
  const helper = await signInWithLink(server.url, /id="new-link">([^<]+)</.exec(invited.text)?.[1] ?? '')
  const made = await helper.submit('/dashboard/keys', '/dashboard/keys', { name: 'helper key' })
  const key = /id="new-key">([^<]+)</.exec(made.text)?.[1] ?? ''
  t.equal((await server.fetch('/api/v1/me', { key })).status, 200)
  const page = await owner.get('/dashboard/team')
  const helperId = /action="\/dashboard\/team\/([\w-]+)\/remove"/.exec(page.text)?.[1] ?? ''
  t.equal((await owner.post(`/dashboard/team/${helperId}/remove`, { csrf: csrfOf(page.text) })).status, 303)
  t.equal(await refused(key), 401)
  t.equal((await helper.get('/dashboard/keys')).status, 303, 'their session ended')
  const again = await owner.submit('/dashboard/team', '/dashboard/team', { email: 'deputy@example.com', role: 'admin' })
  const deputy = await signInWithLink(server.url, /id="new-link">([^<]+)</.exec(again.text)?.[1] ?? '')
  const seen = await deputy.get('/dashboard/team')
  for (const action of ['link', 'remove', 'role']) {
    const r = await deputy.post(`/dashboard/team/${ownerId}/${action}`, { csrf: csrfOf(seen.text), role: 'member' })
    t.equal(r.status, 403, `an admin cannot ${action} an owner`)
  }
})

t.test('account: a password change ends the other sessions; sign out everywhere', async (t) => {
  const url = await link('acct@example.com')
  const one = await signInWithLink(server.url, url)
  const two = new Browser(server.url)
  t.equal((await two.post('/dashboard/signin', { email: 'acct@example.com', password: PASSWORD })).status, 303)
  const page = await one.get('/dashboard/account')
  t.match(page.text, 'FREE')
  const wrong = await one.post('/dashboard/account/password', {
    csrf: csrfOf(page.text),
    current: 'wrong password!',
    password: 'a new password here',
    confirm: 'a new password here',
  })
  t.equal(wrong.status, 422)
  const changed = await one.post('/dashboard/account/password', {
    csrf: csrfOf(page.text),
    current: PASSWORD,
    password: 'a new password here',
    confirm: 'a new password here',
  })
  t.equal(changed.status, 303)
  t.equal((await one.get('/dashboard/account')).status, 200)
  t.equal((await two.get('/dashboard/account')).status, 303)
  const three = new Browser(server.url)
  t.equal(
    (await three.post('/dashboard/signin', { email: 'acct@example.com', password: 'a new password here' })).status,
    303
  )
  t.equal((await one.submit('/dashboard/account', '/dashboard/account/signout-everywhere')).status, 303)
  t.equal((await three.get('/dashboard/account')).status, 303)
  t.equal((await one.get('/dashboard/account')).status, 200)
})

t.test('usage: quota, chart, month selector', async (t) => {
  const b = await signInWithLink(server.url, await link('usage@example.com'))
  const page = await b.get('/dashboard/usage')
  t.equal(page.status, 200)
  t.match(page.text, '<svg class="chart"')
  t.match(page.text, 'of 100')
  t.match(page.text, 'No completions this month')
  t.notMatch(page.text, 'By upstream', 'no upstream table without calls')
  const [{ account_id }] = await server.db.sql`select account_id from users where email = 'usage@example.com'`
  const tries = [
    { upstream: 'anthropic', model: 'm', outcome: 'upstream_unavailable', latency_ms: 3 },
    { upstream: 'openai', model: 'm', outcome: 'ok', latency_ms: 4 },
  ]
  await server.db.sql`insert into completions (account_id, key_prefix, model_alias, upstream_model, latency_ms,
    attempts, outcome, upstream, tries) values (${account_id}, 'k', 'primary', 'm', 7, 2, 'ok', 'openai', ${tries as never})`
  const upstreams = (await b.get('/dashboard/usage')).text
  t.match(upstreams, /By upstream[\s\S]*<td>anthropic<\/td><td class="num">1<\/td>\s*<td class="num">1<\/td>/)
  t.match(upstreams, /<td>openai<\/td><td class="num">1<\/td>\s*<td class="num">0<\/td>/)
  t.equal((await b.get('/dashboard/usage?month=2020-01')).status, 200)
  t.equal((await b.get('/dashboard/usage?month=bogus')).status, 200)
})

t.test('https public URL: the cookie is Secure with the __Host- prefix', async (t) => {
  const https = await startTestServer(t, { STUDIO_PUBLIC_URL: 'https://studio.example.com' }, { dbEnv })
  const url = await signinLink(dbEnv, { STUDIO_PUBLIC_URL: 'https://studio.example.com' }, [
    '--email',
    'sec@example.com',
  ])
  t.match(url, /^https:\/\/studio\.example\.com\/dashboard\/link\//)
  const b = new Browser(https.url, 'https://studio.example.com')
  const set = await b.post(new URL(url).pathname, { password: PASSWORD, confirm: PASSWORD })
  t.match(
    set.headers.get('set-cookie'),
    /^__Host-studio_session=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/
  )
  const other = await new Browser(https.url).post('/dashboard/signin', { email: 'sec@example.com', password: PASSWORD })
  t.equal(other.status, 403, 'the Origin must be the public URL')
})

t.test('STUDIO_DASHBOARD=off: no dashboard, the API alone', async (t) => {
  const off = await startTestServer(t, { STUDIO_DASHBOARD: 'off' }, { dbEnv })
  const r = await off.fetch('/dashboard/signin')
  t.equal(r.status, 404)
  t.match(r.headers.get('content-type'), /json/)
})
