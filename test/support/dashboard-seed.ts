import { setKeyLimits } from '../../src/accounts/key-limits.js'
import { setLeadMailChoice } from '../../src/accounts/lead-mail.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { addNote } from '../../src/leads/notes.js'
import { updateLead } from '../../src/leads/update.js'
import { signinLink } from './dashboard-client.js'
import { testDatabase } from './database.js'
import { eventually } from './eventually.js'
import { receiver } from './receiver.js'
import { startTestServer } from './server.js'
import { smtpServer } from './smtp.js'
import type { Teardown } from './teardown.js'

// A server over a database in which every dashboard page has rows, as a user of some months would have them: keys
// with long names, origins and models, leads, two webhook endpoints with deliveries (one retried, one refused), mail
// sent, a month of usage, a team of two and an audit log with before and after values. For the screenshots and the
// test that every page fits its box. The owner, Ada, signs in with `link` (a sign-in link, unused).
export async function seedDashboard(t: Teardown) {
  const dbEnv = await testDatabase(t)
  // Private addresses allowed: the webhook endpoints are receivers on this machine. Mail on, to a local SMTP server:
  // the sign-in page offers a mailed link, the Account page the lead-mail choice, the Webhooks page the mail log.
  const smtp = await smtpServer(t)
  const server = await startTestServer(
    t,
    {
      STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true',
      STUDIO_SMTP_URL: smtp.url,
      STUDIO_MAIL_FROM: 'Studio <studio@example.com>',
      STUDIO_MODEL_ALIASES: 'claude-sonnet-for-long-documents=anthropic:claude-sonnet-4-5,openai:gpt-4.1',
    },
    { dbEnv }
  )
  const env = { STUDIO_PUBLIC_URL: server.url }
  const link = await signinLink(dbEnv, env, [
    '--email',
    'ada@example.com',
    '--name',
    'Ada Lovelace',
    '--plan',
    'STARTER',
  ])
  const sql = server.db.sql
  const [ada] = await sql<{ id: string; account_id: string }[]>`select id, account_id from users
    where email = 'ada@example.com'`
  const owner = { email: 'ada@example.com', createdBy: ada.id }
  const key = await server.key({ ...owner, keyName: 'website contact form' })
  await server.key({ ...owner, keyName: 'staging' })
  await server.key({
    ...owner,
    keyName: 'contact form on the marketing site and its regional copies',
    scopes: ['leads:write'],
    origins: ['https://www.example-marketing-site.com', 'https://landing.example-marketing-site.co.uk'],
  })
  const assistant = await server.key({
    ...owner,
    keyName: 'support assistant (production, European region)',
    scopes: ['completions:write'],
    limits: { models: ['claude-sonnet-for-long-documents', 'fast'], rateLimit: 60, monthlyCompletions: 5000 },
  })
  await setKeyLimits(sql, {
    prefix: assistant.split('_')[1],
    change: { rateLimit: 120, monthlyCompletions: 20000 },
    actor: { kind: 'user', email: 'ada@example.com', address: '127.0.0.1' },
  })
  await signinLink(dbEnv, env, ['--email', 'grace@example.com', '--name', 'Grace Hopper'])
  await sql`update users set account_id = ${ada.account_id}, role = 'admin' where email = 'grace@example.com'`
  await setLeadMailChoice(sql, ada.id, true)
  // Two endpoints, before the leads so that their lead.created events are delivered and logged: one that takes them
  // (but refuses the key.created event once, so that the log shows a retry), one that answered 410 and was disabled.
  let refused = false
  const crm = await receiver(t, (r, res) => {
    if (refused || !r.body.includes('"key.created"')) return res.end('{"ok":true}')
    refused = true
    res.statusCode = 503
    res.end('Service Unavailable: deploy in progress')
  })
  const gone = await receiver(t, (_, res) => {
    res.statusCode = 410
    res.end('This hook was removed.')
  })
  const hooks = [
    { accountId: ada.account_id, url: crm.url, description: 'CRM sync' },
    { accountId: ada.account_id, url: gone.url, events: ['lead.created'], description: 'Old Zapier zap' },
  ]
  for (const h of hooks) await addEndpoint(sql, h, true)
  const people = [
    'Marie Curie',
    'Alan Turing',
    'Katherine Johnson',
    'Linus Pauling',
    'Rosalind Franklin',
    'Tim Berners-Lee',
  ]
  for (const [i, name] of people.entries()) {
    const r = await server.fetch('/api/v1/leads', {
      method: 'POST',
      key,
      json: {
        name,
        email: `${name.split(' ')[0].toLowerCase()}@example.org`,
        company: ['Radium Ltd', 'Bletchley', 'NASA', 'Caltech', "King's College", 'CERN'][i],
        service: ['Website', 'Mobile app', 'Consulting'][i % 3],
        message: 'We would like a quote for a new project starting next quarter.',
        utm: { source: 'newsletter', campaign: 'autumn' },
      },
    })
    if (r.status !== 201) throw new Error(`lead: ${r.status}`)
  }
  await eventually(() => crm.got.length >= people.length && gone.got.length >= 1, { what: 'the leads delivered' })
  await eventually(() => smtp.got.length >= people.length, { what: 'the lead mails sent' })
  // Leads some weeks in: triaged, given to someone, with notes; the newest two nobody has opened yet.
  const leads = await sql<{ id: string }[]>`select id from leads where account_id = ${ada.account_id}
    order by created_at, id`
  const actor = { kind: 'user' as const, email: 'ada@example.com', address: null }
  const triage = [
    { status: 'won', assignee: 'ada@example.com' },
    { status: 'contacted', assignee: 'grace@example.com' },
    { status: 'qualified', assignee: 'ada@example.com' },
    { status: 'lost', assignee: null },
  ] as const
  for (const [i, change] of triage.entries()) {
    const id = leads[i].id
    await updateLead(sql, { accountId: ada.account_id, id, change, actor })
    await sql`update leads set opened_at = created_at where id = ${id}`
  }
  const author = { kind: 'user' as const, email: 'ada@example.com' }
  await addNote(sql, ada.account_id, leads[0].id, 'Called her: a website and a booking form, budget agreed.', author)
  await addNote(sql, ada.account_id, leads[0].id, 'Signed the quote. Kick-off on Monday.', {
    kind: 'user',
    email: 'grace@example.com',
  })
  const prefix = key.split('_')[1]
  const now = new Date()
  for (let day = 1; day <= now.getUTCDate(); day++) {
    const n = 3 + ((day * 7) % 11)
    const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), day, 12))
    await sql`insert into completions (account_id, key_prefix, model_alias, upstream_model, input_tokens, output_tokens,
      latency_ms, attempts, outcome, created_at)
      select ${ada.account_id}, ${prefix}, 'primary', 'model', 120, 340, 800, 1, case when g % 9 = 0 then 'upstream_error' else 'ok' end, ${at}
      from generate_series(1, ${n}) g`
  }
  await sql`insert into quota_usage (account_id, month, used) values (${ada.account_id}, date_trunc('month', now())::date, 1234)
            on conflict do nothing`
  return { server, link, crm, gone, accountId: ada.account_id }
}
