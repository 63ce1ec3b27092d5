import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { setKeyCaptcha } from '../../src/accounts/key-captcha.js'
import { setKeyForm } from '../../src/accounts/key-form.js'
import { createKey } from '../../src/accounts/key-lifecycle.js'
import { signInWithLink, signinLink } from '../support/dashboard-client.js'
import { issuedKeys, startTestServer } from '../support/server.js'

// A lead key's CAPTCHA, checked with a fake siteverify on port 0 (STUDIO_CAPTCHA_VERIFY_URL) on the form endpoint
// (each provider's own token field) and on POST /api/v1/leads (X-Captcha-Token): success stores the lead; a failure,
// a missing token, a wrong hostname or a low v3 score keep it as spam (captcha_failed) and ask to try again; a 5xx
// or a hang stores and delivers it, flagged captcha_unverified. The secret is in no log line, page or audit entry.
const SITE = 'https://shop.example'
const SECRET = 'captcha-secret-0x4AAAAAAABkMYinukE8nzY'

// The fake siteverify: the token says what it answers.
const asked: URLSearchParams[] = []
const hung: ServerResponse[] = []
const verify = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  let text = ''
  for await (const chunk of req) text += chunk
  const form = new URLSearchParams(text)
  asked.push(form)
  const json = (body: unknown, status = 200) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  const token = form.get('response')
  if (form.get('secret') !== SECRET) return json({ success: false, 'error-codes': ['invalid-input-secret'] })
  if (token === 'ok') return json({ success: true, hostname: 'shop.example' })
  if (token === 'v3-high') return json({ success: true, hostname: 'shop.example', score: 0.9 })
  if (token === 'v3-low') return json({ success: true, hostname: 'shop.example', score: 0.1 })
  if (token === 'wrong-host') return json({ success: true, hostname: 'evil.example' })
  if (token === 'down') return json({ error: 'unavailable' }, 503)
  if (token === 'hang') return void hung.push(res)
  json({ success: false, 'error-codes': ['invalid-input-response'] })
})
await new Promise<void>((resolve) => verify.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  verify.closeAllConnections()
  verify.close()
})
const verifyUrl = `http://127.0.0.1:${(verify.address() as AddressInfo).port}/siteverify`

const s = await startTestServer(t, { STUDIO_LEAD_KEY_ADDRESS_LIMIT: '1000', STUDIO_CAPTCHA_VERIFY_URL: verifyUrl })
const { sql } = s.db
const pages: string[] = []

type Provider = 'turnstile' | 'hcaptcha' | 'recaptcha'
const FIELD = { turnstile: 'cf-turnstile-response', hcaptcha: 'h-captcha-response', recaptcha: 'g-recaptcha-response' }
async function captchaKey(provider: Provider, minScore: number | null = null) {
  const email = `cap${Math.random().toString(36).slice(2)}@example.com`
  const made = await createKey(sql, { email, scopes: ['leads:write'], origins: [SITE] })
  issuedKeys.push(made.key)
  if (!(await setKeyForm(sql, { prefix: made.prefix, change: { open: true } })).ok) throw new Error('not opened')
  await setKeyCaptcha(sql, {
    prefix: made.prefix,
    captcha: { provider, secret: SECRET, minScore },
    actor: { kind: 'cli', osUser: 'test' },
  })
  return made
}
const leadsOf = (p: string) =>
  sql<{ id: string; spam: boolean; spam_reason: string | null; captcha_unverified: boolean }[]>`
    select id, spam, spam_reason, captcha_unverified from leads where key_prefix = ${p} order by created_at`
const FORM = { name: 'Ada', email: 'ada@example.com', service: 'Hosting', message: 'Call me' }
async function post(p: string, form: Record<string, string>) {
  const res = await fetch(`${s.url}/forms/${p}`, {
    method: 'POST',
    body: new URLSearchParams(form),
    redirect: 'manual',
    headers: { origin: SITE, referer: `${SITE}/contact` },
  })
  const page = await res.text()
  pages.push(page)
  return { status: res.status, page }
}
const eventOf = async (leadId: string) => {
  const rows = await sql<{ body: string }[]>`select body from events where type = 'lead.created'`
  const bodies = rows.map((r) => JSON.parse(r.body)).filter((b) => b.data.id === leadId)
  return bodies[0]?.data
}

t.test('happy: a verified token stores the lead, for each provider’s token field', async (t) => {
  for (const [provider, token] of [
    ['turnstile', 'ok'],
    ['hcaptcha', 'ok'],
    ['recaptcha', 'ok'],
  ] as const) {
    const k = await captchaKey(provider)
    const before = asked.length
    const res = await post(k.prefix, { ...FORM, [FIELD[provider]]: token })
    t.equal(res.status, 200, provider)
    t.match(res.page, 'Thank you')
    t.match(await leadsOf(k.prefix), [{ spam: false, spam_reason: null, captcha_unverified: false }])
    const sent = asked[before]
    t.equal(sent.get('response'), token)
    t.equal(sent.get('secret'), SECRET, 'the secret goes to the provider')
    t.equal(sent.get('remoteip'), '127.0.0.1')
  }
  const v3 = await captchaKey('recaptcha', 0.5)
  t.equal((await post(v3.prefix, { ...FORM, [FIELD.recaptcha]: 'v3-high' })).status, 200)
  t.match(await leadsOf(v3.prefix), [{ spam: false }])
})

t.test('error: failed, missing, wrong hostname, low v3 score: kept as spam, asked to try again', async (t) => {
  for (const provider of ['turnstile', 'hcaptcha', 'recaptcha'] as const) {
    const k = await captchaKey(provider)
    for (const token of ['bad', 'wrong-host', undefined]) {
      const form = token === undefined ? FORM : { ...FORM, [FIELD[provider]]: token }
      const res = await post(k.prefix, form)
      t.equal(res.status, 422, `${provider} ${token}`)
      t.match(res.page, 'Please try again')
      t.match(res.page, 'complete it again')
    }
    // Another provider's field is not this key's token.
    const other = provider === 'turnstile' ? FIELD.hcaptcha : FIELD.turnstile
    t.equal((await post(k.prefix, { ...FORM, [other]: 'ok' })).status, 422)
    const leads = await leadsOf(k.prefix)
    t.equal(leads.length, 4)
    t.ok(leads.every((l) => l.spam && l.spam_reason === 'captcha_failed' && !l.captcha_unverified))
    for (const l of leads) t.equal(await eventOf(l.id), undefined, 'spam has no event')
  }
  const v3 = await captchaKey('recaptcha', 0.5)
  t.equal((await post(v3.prefix, { ...FORM, [FIELD.recaptcha]: 'v3-low' })).status, 422)
  t.equal((await post(v3.prefix, { ...FORM, [FIELD.recaptcha]: 'ok' })).status, 422, 'v3 with a minimum needs a score')
  t.match(await leadsOf(v3.prefix), [{ spam_reason: 'captcha_failed' }, { spam_reason: 'captcha_failed' }])
})

t.test('error: the provider down (5xx) or hanging: stored, flagged, delivered', async (t) => {
  for (const provider of ['turnstile', 'hcaptcha', 'recaptcha'] as const) {
    const k = await captchaKey(provider)
    const res = await post(k.prefix, { ...FORM, [FIELD[provider]]: 'down' })
    t.equal(res.status, 200, provider)
    const [lead] = await leadsOf(k.prefix)
    t.match(lead, { spam: false, captcha_unverified: true })
    t.match(await eventOf(lead.id), { captchaUnverified: true, name: 'Ada' })
  }
  // Once, the hang: answered after the 5 s deadline, stored and flagged.
  const k = await captchaKey('turnstile')
  const res = await post(k.prefix, { ...FORM, [FIELD.turnstile]: 'hang' })
  t.equal(res.status, 200)
  t.equal(hung.length, 1)
  const [lead] = await leadsOf(k.prefix)
  t.match(lead, { spam: false, captcha_unverified: true })
  // The lead's dashboard page says so, and a failed one says why it is spam.
  const [email] = (
    await sql`select u.email from api_keys k join users u on u.id = k.user_id where k.prefix = ${k.prefix}`
  ).map((r) => r.email as string)
  const owner = await signInWithLink(s.url, await signinLink(s.dbEnv, {}, ['--email', email]))
  const detail = await owner.get(`/dashboard/leads/${lead.id}`)
  t.equal(detail.status, 200)
  t.match(detail.text, 'CAPTCHA unverified')
  await post(k.prefix, { ...FORM, [FIELD.turnstile]: 'bad' })
  const [, failed] = await leadsOf(k.prefix)
  t.match((await owner.get(`/dashboard/leads/${failed.id}`)).text, 'its CAPTCHA failed')
  const ok = await captchaKey('turnstile')
  await post(ok.prefix, { ...FORM, [FIELD.turnstile]: 'ok' })
  const [verified] = await leadsOf(ok.prefix)
  t.notOk('captchaUnverified' in (await eventOf(verified.id)), 'a verified lead’s event has no flag')
})

t.test('POST /api/v1/leads: X-Captcha-Token, 422 captcha_failed', async (t) => {
  const k = await captchaKey('hcaptcha')
  const send = (token?: string) =>
    s.fetch('/api/v1/leads', {
      method: 'POST',
      key: k.key,
      json: FORM,
      headers: { origin: SITE, ...(token && { 'x-captcha-token': token }) },
    })
  t.equal((await send('ok')).status, 201)
  for (const token of ['bad', 'wrong-host', undefined]) {
    const res = await send(token)
    t.equal(res.status, 422, String(token))
    const body = (await res.json()) as { error: { code: string } }
    t.equal(body.error.code, 'captcha_failed')
  }
  t.equal((await send('down')).status, 201)
  const leads = await leadsOf(k.prefix)
  t.match(leads, [
    { spam: false, captcha_unverified: false },
    { spam_reason: 'captcha_failed' },
    { spam_reason: 'captcha_failed' },
    { spam_reason: 'captcha_failed' },
    { spam: false, captcha_unverified: true },
  ])
  // A key without a CAPTCHA ignores the header.
  const plain = await s.key({ email: 'plain-cap@example.com', scopes: ['leads:write'] })
  const res = await s.fetch('/api/v1/leads', {
    method: 'POST',
    key: plain,
    json: FORM,
    headers: { 'x-captcha-token': 'x' },
  })
  t.equal(res.status, 201)
})

t.test('security: the secret is in no log line, page or audit entry', async (t) => {
  t.ok(asked.length > 10)
  t.notOk(
    s.log.lines.some((l) => l.includes(SECRET)),
    'no log line'
  )
  t.notOk(
    pages.some((p) => p.includes(SECRET)),
    'no page'
  )
  const audit = await sql<
    { v: string }[]
  >`select coalesce(before::text, '') || coalesce(after::text, '') as v from audit_log`
  t.ok(audit.length > 0)
  t.notOk(
    audit.some((r) => r.v.includes(SECRET)),
    'no audit entry'
  )
  const listing = await s.fetch('/api/v1/openapi.json')
  t.notMatch(await listing.text(), SECRET)
})
