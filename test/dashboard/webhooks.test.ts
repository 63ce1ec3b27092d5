import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { type Browser, csrfOf, signInWithLink, signinLink } from '../support/dashboard-client.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// The dashboard's Webhooks section over HTTP, as a browser without script sends it: real server, real database, real
// receivers on port 0.
const dbEnv = await testDatabase(t)
const server = await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { dbEnv })
const env = { STUDIO_PUBLIC_URL: server.url }
const link = (email: string, ...more: string[]) => signinLink(dbEnv, env, ['--email', email, ...more])
const owner = await signInWithLink(server.url, await link('hooks-owner@example.com', '--name', 'Hook Owner'))
const secrets: string[] = []

const SECRET = /whsec_[A-Za-z0-9+/]+=*/g
const LIST = '/dashboard/webhooks'

// Adds an endpoint through the form; returns its id and the secret the answer showed.
async function add(b: Browser, form: Record<string, string>) {
  const r = await b.post(LIST, { csrf: csrfOf((await b.get(LIST)).text), scope: 'all', ...form })
  const secret = r.text.match(SECRET)?.[0] ?? ''
  if (secret) secrets.push(secret)
  const id = new RegExp(`href="/dashboard/webhooks/([0-9a-f-]{36})"><code>${form.url}`).exec(r.text)?.[1] ?? ''
  return { r, id, secret }
}

const attemptsOf = async (b: Browser, id: string) =>
  ((await b.get(`${LIST}/${id}`)).text.match(/<td class="num">\d+ ms<\/td>/g) ?? []).length

t.test('add an endpoint: the secret is shown once, in that answer; the list shows the endpoint', async (t) => {
  const r = await receiver(t)
  const added = await add(owner, { url: r.url, description: 'CRM <sync>', scope: 'some', events: 'lead.created' })
  t.equal(added.r.status, 200)
  t.match(added.r.text, 'Endpoint added')
  t.match(added.secret, /^whsec_/)
  t.equal(added.r.text.match(SECRET)?.length, 1)
  t.ok(added.id, 'the new endpoint is listed with a link')
  const list = await owner.get(LIST)
  t.match(list.text, 'CRM &lt;sync&gt;', 'escaped')
  t.match(list.text, 'lead.created')
  const detail = await owner.get(`${LIST}/${added.id}`)
  t.equal(detail.status, 200)
  t.match(detail.text, 'Nothing sent yet')
  for (const page of [list, detail]) t.notMatch(page.text, SECRET, 'never shown again')
  t.match((await owner.get('/dashboard/keys')).text, 'href="/dashboard/webhooks"', 'in the navigation')
})

t.test('a Slack endpoint: lead.created only, marked in the list; its test event is a message', async (t) => {
  const r = await receiver(t)
  const { id } = await add(owner, { url: r.url, kind: 'slack' })
  t.match((await owner.get(LIST)).text, new RegExp(`${id}.*?lead\\.created \\(Slack\\)`, 's'))
  await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/test`)
  await eventually(() => r.got.length === 1, { what: 'the test message' })
  t.match(JSON.parse(r.got[0].body), { text: /test message/ })
})

t.test('send a test event, see it in the log, resend it: the same webhook-id, signed with the secret', async (t) => {
  const r = await receiver(t, (_, res) => res.end('thanks <b>'))
  const { id, secret } = await add(owner, { url: r.url, scope: 'some', events: 'key.revoked' })
  const sent = await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/test`)
  t.equal(sent.status, 303)
  t.equal(sent.headers.get('location'), `${LIST}/${id}?done=webhook-test`)
  await eventually(() => r.got.length === 1, { what: 'the test event' })
  const event = new Webhook(secret).verify(r.got[0].body, r.got[0].headers as Record<string, string>)
  t.match(event, { type: 'webhook.test', data: { endpointId: id, who: 'hooks-owner@example.com' } })
  await eventually(async () => (await attemptsOf(owner, id)) === 1, { what: 'the attempt in the log' })
  const log = (await owner.get(`${LIST}/${id}`)).text
  t.match(log, 'webhook.test')
  t.match(log, r.got[0].headers['webhook-id'] as string)
  t.match(log, 'thanks &lt;b&gt;', "the answer's first bytes, escaped")
  const again = await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/resend`, {
    event: r.got[0].headers['webhook-id'] as string,
  })
  t.equal(again.status, 303)
  await eventually(() => r.got.length === 2, { what: 'the event sent again' })
  t.equal(r.got[1].headers['webhook-id'], r.got[0].headers['webhook-id'])
  t.equal(r.got[1].body, r.got[0].body)
  await eventually(async () => (await attemptsOf(owner, id)) === 2, { what: 'both attempts in the log' })
})

t.test(
  'rotate (the new secret once), disable with the reason shown, enable, delete after a confirmation',
  async (t) => {
    const r = await receiver(t)
    const { id, secret } = await add(owner, { url: r.url })
    const rotated = await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/rotate`)
    t.equal(rotated.status, 200)
    const fresh = rotated.text.match(SECRET) ?? []
    t.equal(fresh.length, 1)
    t.not(fresh[0], secret)
    const [{ until }] = await server.db.sql<{ until: Date }[]>`
      select previous_secret_until as until from webhook_endpoints where id = ${id}`
    const shown = until.toISOString().slice(0, 16).replace('T', ' ')
    t.match(rotated.text, `The old secret keeps signing until ${shown} UTC.`)
    secrets.push(fresh[0] as string)
    t.notMatch((await owner.get(`${LIST}/${id}`)).text, SECRET)
    t.equal((await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/disable`)).status, 303)
    const disabled = (await owner.get(`${LIST}/${id}`)).text
    t.match(disabled, 'disabled by hand by hooks-owner@example.com')
    t.notMatch(disabled, 'Send test event')
    t.match((await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/test`)).text, 'enable it to send it a test event')
    t.equal((await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/enable`)).status, 303)
    t.match((await owner.get(`${LIST}/${id}`)).text, 'Send test event')
    const confirm = await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/delete`)
    t.equal(confirm.status, 200)
    t.match(confirm.text, 'Delete this endpoint?')
    t.equal((await owner.get(`${LIST}/${id}`)).status, 200, 'nothing deleted before the confirmation')
    const gone = await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/delete`, { confirm: 'yes' })
    t.equal(gone.headers.get('location'), `${LIST}?done=webhook-deleted`)
    t.equal((await owner.get(`${LIST}/${id}`)).status, 404)
  }
)

t.test('an endpoint that answered 410 shows why it is disabled', async (t) => {
  const r = await receiver(t, (_, res) => {
    res.statusCode = 410
    res.end('gone')
  })
  const { id } = await add(owner, { url: r.url })
  await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/test`)
  await eventually(async () => (await owner.get(`${LIST}/${id}`)).text.includes('410 Gone'), { what: 'disabled' })
  t.match((await owner.get(LIST)).text, 'the endpoint answered 410 Gone')
})

t.test('bad input: a clear page, the form kept, nothing added', async (t) => {
  const before = (await owner.get(LIST)).text.match(/<tr><td><a/g)?.length
  const cases: [Record<string, string>, string][] = [
    [{ url: 'not a url' }, 'must be a URL'],
    [{ url: 'ftp://example.com/x' }, 'must be https: or http:'],
    [{ url: 'https://example.com/x', scope: 'some', events: 'lead.nope' }, 'event types are'],
    [{ url: 'https://example.com/x', scope: 'some' }, 'pick at least one event type'],
    [{ url: `https://example.com/${'x'.repeat(2100)}` }, 'at most 2048'],
  ]
  for (const [form, message] of cases) {
    const { r } = await add(owner, form)
    t.equal(r.status, 422, message)
    t.match(r.text, 'The endpoint was not added')
    t.match(r.text, message)
    if (form.url.length < 100) t.match(r.text, `value="${form.url}"`, 'the form keeps what was typed')
  }
  t.equal((await owner.get(LIST)).text.match(/<tr><td><a/g)?.length, before)
  const pigeon = await add(owner, { url: 'https://example.com/x', kind: 'carrier-pigeon' })
  t.equal(pigeon.r.status, 422)
  t.match(pigeon.r.text, 'the kind is standard or slack')
  const slack = await add(owner, { url: 'https://example.com/x', kind: 'slack', scope: 'some', events: 'key.created' })
  t.equal(slack.r.status, 422)
  t.match(slack.r.text, 'a slack endpoint receives lead.created only')
  t.match(slack.r.text, '<option value="slack" selected>', 'the kind is kept')
  t.equal((await owner.get(`${LIST}/00000000-0000-4000-8000-000000000000`)).status, 404)
  t.equal((await owner.get(`${LIST}/not-a-uuid`)).status, 404)
  const { id } = await add(owner, { url: 'http://127.0.0.1:9/unused' })
  const resend = await owner.submit(`${LIST}/${id}`, `${LIST}/${id}/resend`, { event: 'evt_nope' })
  t.equal(resend.status, 404)
  t.match(resend.text, 'never sent that event')
})

t.test('a private address is refused without STUDIO_WEBHOOKS_ALLOW_PRIVATE', async (t) => {
  const strict = await startTestServer(t, {}, { dbEnv })
  const b = await signInWithLink(
    strict.url,
    await signinLink(dbEnv, { STUDIO_PUBLIC_URL: strict.url }, ['--email', 'strict@example.com'])
  )
  for (const url of ['https://127.0.0.1/hook', 'https://10.0.0.1/hook', 'https://[::ffff:192.168.0.1]/hook']) {
    const { r } = await add(b, { url })
    t.equal(r.status, 422, url)
    t.match(r.text, /loopback, private/)
  }
  t.match((await add(b, { url: 'http://93.184.216.34/hook' })).r.text, 'must be https:')
})

t.test('security: members are forbidden, and every POST needs the CSRF token and this origin', async (t) => {
  const { id } = await add(owner, { url: 'http://127.0.0.1:9/guarded' })
  await owner.submit('/dashboard/team', '/dashboard/team', { email: 'hooks-member@example.com', role: 'member' })
  const member = await signInWithLink(server.url, await link('hooks-member@example.com'))
  t.notMatch((await member.get('/dashboard/keys')).text, 'href="/dashboard/webhooks"', 'not in their navigation')
  for (const path of [LIST, `${LIST}/${id}`]) {
    const r = await member.get(path)
    t.equal(r.status, 403, path)
    t.match(r.text, 'Only owners and admins')
  }
  const csrf = csrfOf((await member.get('/dashboard/keys')).text)
  for (const action of ['test', 'rotate', 'disable', 'delete']) {
    const r = await member.post(`${LIST}/${id}/${action}`, { csrf, confirm: 'yes' })
    t.equal(r.status, 403, action)
    t.notMatch(r.text, SECRET)
  }
  t.equal((await member.post(LIST, { csrf, scope: 'all', url: 'http://127.0.0.1:9/m' })).status, 403)
  const noToken = await owner.post(`${LIST}/${id}/disable`, {})
  t.equal(noToken.status, 403)
  const wrongToken = await owner.post(`${LIST}/${id}/rotate`, { csrf: 'x'.repeat(43) })
  t.equal(wrongToken.status, 403)
  t.notMatch(wrongToken.text, SECRET)
  const token = csrfOf((await owner.get(LIST)).text)
  const foreign = await owner.post(`${LIST}/${id}/delete`, { csrf: token, confirm: 'yes' }, 'https://evil.example')
  t.equal(foreign.status, 403)
  const noOrigin = await owner.post(LIST, { csrf: token, scope: 'all', url: 'http://127.0.0.1:9/n' }, null)
  t.equal(noOrigin.status, 403)
  const page = (await owner.get(`${LIST}/${id}`)).text
  t.match(page, 'Send test event', 'still enabled: nothing changed')
  t.notMatch((await owner.get(LIST)).text, '127.0.0.1:9/n')
})

t.test('an admin manages the endpoints as an owner does', async (t) => {
  const { id } = await add(owner, { url: 'http://127.0.0.1:9/admins' })
  await owner.submit('/dashboard/team', '/dashboard/team', { email: 'hooks-admin@example.com', role: 'admin' })
  const admin = await signInWithLink(server.url, await link('hooks-admin@example.com'))
  t.match((await admin.get(LIST)).text, '127.0.0.1:9/admins')
  t.equal((await admin.submit(`${LIST}/${id}`, `${LIST}/${id}/disable`)).status, 303)
  t.match((await owner.get(`${LIST}/${id}`)).text, 'disabled by hand by hooks-admin@example.com')
})

t.test("another account's endpoint is not there; no secret reaches a log", async (t) => {
  const { id } = await add(owner, { url: 'http://127.0.0.1:9/theirs' })
  const stranger = await signInWithLink(server.url, await link('hooks-stranger@example.com'))
  t.equal((await stranger.get(`${LIST}/${id}`)).status, 404)
  t.equal((await stranger.submit(LIST, `${LIST}/${id}/rotate`)).status, 404)
  t.equal((await stranger.submit(LIST, `${LIST}/${id}/delete`, { confirm: 'yes' })).status, 404)
  t.match((await owner.get(`${LIST}/${id}`)).text, '127.0.0.1:9/theirs')
  const log = server.log.lines.join('\n')
  t.ok(secrets.length >= 3 && secrets.every((s) => /^whsec_[A-Za-z0-9+/=]{32,}$/.test(s)), 'the secrets shown')
  for (const s of secrets) t.notOk(log.includes(s.slice(6)), 'a secret in a log')
})
