import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { addEndpoint, listEndpoints } from '../../src/events/endpoints.js'
import { recordEvent } from '../../src/outbox/event.js'
import { claimDue } from '../../src/events/deliveries.js'
import { version } from '../../src/ops/version.js'
import { logLines, startTestServer } from '../support/server.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'

// The delivery worker of a real server over a real database, posting to real receivers on port 0. The server's clock
// is moved by the test (never slept on); random() = 0.5 takes the jitter out of the schedule.
let offset = 0
let frozen: number | null = null
const clock = () => frozen ?? Date.now() + offset
const s = await startTestServer(
  t,
  { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true', STUDIO_WEBHOOKS_TIMEOUT_MS: '500' },
  { clock, webhooks: { pollMs: 20, random: () => 0.5 } }
)
const { sql } = s.db
const secrets: string[] = []

async function endpoint(url: string, events?: string[]) {
  const key = await s.key()
  const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
    select account_id from api_keys where prefix = ${key.split('_')[1]}`
  const e = await addEndpoint(sql, { accountId, url, events }, true)
  secrets.push(e.secret)
  return { ...e, accountId }
}

const keyEvent = (prefix = 'pfx') => ({ type: 'key.created' as const, data: { prefix, name: 'k', who: null } })
const record = (accountId: string, prefix?: string) =>
  sql.begin((tx) => recordEvent(tx as never, accountId, keyEvent(prefix), new Date(clock())))
const attempts = (endpointId: string) => sql<{ status: number | null; answer: string; at: Date }[]>`
  select status, answer, at from webhook_attempt_log where endpoint_id = ${endpointId} order by at, id nulls last`
const delivery = async (eventId: string) =>
  (
    await sql<{ state: string; attempts: number; next_at: Date }[]>`
    select state, attempts, next_at from webhook_deliveries where event_id = ${eventId}`
  )[0]

t.test('an event arrives signed, complete and verifiable with standardwebhooks', async (t) => {
  const r = await receiver(t)
  const e = await endpoint(r.url)
  const event = await record(e.accountId, 'first')
  await eventually(() => r.got.length > 0, { what: 'the delivery' })
  const [got] = r.got
  t.equal(got.body, event.body)
  t.equal(got.headers['content-type'], 'application/json')
  t.equal(got.headers['user-agent'], `Studio-Webhooks/${version}`)
  t.equal(got.headers['webhook-id'], event.id)
  const verified = new Webhook(e.secret).verify(got.body, got.headers as Record<string, string>)
  t.same(verified, { type: 'key.created', timestamp: JSON.parse(event.body).timestamp, data: keyEvent('first').data })
  await eventually(async () => (await delivery(event.id)).state === 'delivered', { what: 'marked delivered' })
  const [attempt] = await attempts(e.id)
  t.equal(attempt.status, 200)
  t.equal(attempt.answer, 'ok')
  t.equal((await listEndpoints(sql, e.accountId))[0].lastStatus, 200)
})

t.test('a receiver failing three times: retried on the schedule, not sooner, the same webhook-id', async (t) => {
  const r = await receiver(t, (_, res, n) => {
    res.statusCode = n <= 3 ? 500 : 200
    res.end(`answer ${n}`)
  })
  const e = await endpoint(r.url)
  // Once a later event of another endpoint has arrived, the worker has polled at the frozen time.
  const witness = await receiver(t)
  const other = await endpoint(witness.url)
  const polled = async () => {
    const n = witness.got.length
    await record(other.accountId, 'witness')
    await eventually(() => witness.got.length > n, { what: 'a poll at the frozen time' })
  }
  frozen = Date.now() + offset
  const event = await record(e.accountId)
  for (const [n, delay] of [
    [1, 5_000],
    [2, 300_000],
    [3, 1_800_000],
  ]) {
    await eventually(async () => (await delivery(event.id)).attempts === n, { what: `attempt ${n} logged` })
    const [last] = (await attempts(e.id)).slice(-1)
    const due = (await delivery(event.id)).next_at.getTime()
    t.equal(due - last.at.getTime(), delay, `then ${delay} ms`)
    frozen = due - 1
    await polled()
    t.equal(r.got.length, n, `1 ms before it is due, no attempt ${n + 1}`)
    frozen = due
  }
  await eventually(async () => (await delivery(event.id)).state === 'delivered', {
    what: 'delivered at the 4th attempt',
  })
  offset = frozen - Date.now()
  frozen = null
  t.same(new Set(r.got.map((g) => g.headers['webhook-id'])), new Set([event.id]))
  t.same(
    (await attempts(e.id)).map((a) => [a.status, a.answer]),
    [
      [500, 'answer 1'],
      [500, 'answer 2'],
      [500, 'answer 3'],
      [200, 'answer 4'],
    ]
  )
})

t.test('429 with Retry-After is retried no sooner than it asks', async (t) => {
  const r = await receiver(t, (_, res) => res.writeHead(429, { 'retry-after': '3600' }).end())
  const e = await endpoint(r.url)
  const event = await record(e.accountId)
  await eventually(async () => (await delivery(event.id)).attempts === 1, { what: 'attempted' })
  const [a] = await attempts(e.id)
  t.equal((await delivery(event.id)).next_at.getTime() - a.at.getTime(), 3_600_000)
})

t.test('410 disables the endpoint and cancels its pending retries', async (t) => {
  const r = await receiver(t, (req, res) => res.writeHead(req.body.includes('"gone"') ? 410 : 500).end())
  const e = await endpoint(r.url)
  const failing = await record(e.accountId, 'failing')
  await eventually(async () => (await delivery(failing.id)).attempts === 1, { what: 'first one failed' })
  const gone = await record(e.accountId, 'gone')
  await eventually(async () => (await listEndpoints(sql, e.accountId))[0].disabledReason, { what: 'disabled' })
  t.match((await listEndpoints(sql, e.accountId))[0].disabledReason, /410/)
  t.equal((await delivery(failing.id)).state, 'cancelled')
  t.equal((await delivery(gone.id)).state, 'failed')
  const later = await record(e.accountId, 'later')
  t.equal(await delivery(later.id), undefined, 'a disabled endpoint gets no new deliveries')
})

t.test('a redirect is not followed; a hanging receiver times out; the answer is read at most 64 KiB', async (t) => {
  const target = await receiver(t)
  const redirecting = await receiver(t, (_, res) => res.writeHead(302, { location: target.url }).end())
  const hanging = await receiver(t, () => {})
  const big = await receiver(t, (_, res) => res.end('x'.repeat(1_000_000)))
  const [a, b, c] = [await endpoint(redirecting.url), await endpoint(hanging.url), await endpoint(big.url)]
  const events = [await record(a.accountId), await record(b.accountId), await record(c.accountId)]
  for (const e of events) await eventually(async () => (await delivery(e.id)).attempts === 1, { what: 'attempted' })
  t.equal((await attempts(a.id))[0].status, 302)
  t.equal(target.got.length, 0, 'the redirect target got nothing')
  t.same((await attempts(b.id))[0].status, null)
  t.match((await attempts(b.id))[0].answer, /no answer within 500 ms/)
  t.equal((await attempts(c.id))[0].status, 200)
  t.equal((await attempts(c.id))[0].answer.length, 64 * 1024)
})

t.test('a claim of a process that died is taken up once its lease ends', async (t) => {
  const r = await receiver(t)
  const e = await endpoint(r.url)
  const later = new Date(clock() + 3_600_000)
  const event = await sql.begin((tx) => recordEvent(tx as never, e.accountId, keyEvent(), later))
  const dead = await claimDue(sql, later, 10_500, 1000)
  t.ok(
    dead.some((d) => d.eventId === event.id),
    'claimed by a process that then died'
  )
  offset += 3_600_000
  offset += 11_000
  await eventually(() => r.got.length === 1, { what: 'delivered by the live worker after the lease' })
})

t.test('metrics: attempts by outcome, deliveries waiting, age of the oldest', async (t) => {
  const text = s.metrics.render()
  t.match(text, /studio_webhook_attempts_total\{outcome="delivered"\} [1-9]/)
  t.match(text, /studio_webhook_deliveries_waiting \d+/)
  t.match(text, /studio_webhook_oldest_waiting_seconds [\d.]+/)
})

t.test('no secret reaches a log', async (t) => {
  t.ok(secrets.length > 5)
  for (const secret of secrets)
    t.notOk(
      logLines.some((l) => l.includes(secret.slice(6))),
      'secret not logged'
    )
})
