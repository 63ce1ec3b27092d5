import t, { type Test } from 'tap'
import { parseDuration } from '../../src/ops/duration.js'
import { issuedKeys, startTestServer } from '../support/server.js'
import { cliOn } from '../support/cli.js'
import { eventually } from '../support/eventually.js'

const HOUR = 3600_000
let offset = 0
const s = await startTestServer(t, {}, { clock: () => Date.now() + offset })
const { dbEnv } = s

// The CLI against the running server's database.
const cli = cliOn(dbEnv)

const status = async (key: string) => {
  const r = await s.fetch('/api/v1/me', { key })
  await r.arrayBuffer()
  return r.status
}

// A change made by another process reaches the server through its poller (every 500 ms): wait for it, without
// assuming how long it takes beyond a generous deadline.
async function answers(t: Test, key: string, expected: number, what: string) {
  t.equal(await eventually(async () => (await status(key)) === expected && expected, { what }), expected, what)
}

const prefixOf = (key: string) => key.split('_')[1]
const listed = async (prefix: string) => {
  const { out } = await cli(['keys', 'list'])
  const header = out[0].split('\t')
  const row = out.find((l) => l.startsWith(`${prefix}\t`))!.split('\t')
  return Object.fromEntries(header.map((h, i) => [h, row[i]]))
}

t.afterEach(() => {
  offset = 0
})

t.test('durations', async (t) => {
  t.equal(parseDuration('45s'), 45)
  t.equal(parseDuration('30m'), 1800)
  t.equal(parseDuration('24h'), 86_400)
  t.equal(parseDuration('90d'), 90 * 86_400)
  t.equal(parseDuration('0'), 0)
  t.equal(parseDuration('0s'), 0)
  for (const bad of ['', '90', 'd', '1.5h', '-1d', '5w', '1 h', '1H', '99999999999d', '36501d'])
    t.equal(parseDuration(bad), null, bad)
})

t.test('bad lifecycle arguments: a usage line and exit code 2', async (t) => {
  for (const args of [
    ['keys', 'create', '--plan', 'PRO', '--expires-in', '90'],
    ['keys', 'create', '--plan', 'PRO', '--expires-in', '0'],
    ['keys', 'create', '--email', 'x@example.com', '--expires-in', '3w'],
    ['keys', 'rotate'],
    ['keys', 'rotate', 'short'],
    ['keys', 'rotate', 'AAAAAAAAAAAA', '--grace', 'soon'],
    ['keys', 'rotate', 'AAAAAAAAAAAA', '--expires-in', '0'],
    ['keys', 'rotate', 'AAAAAAAAAAAA', 'BBBBBBBBBBBB'],
  ]) {
    const { code, err } = await cli(args)
    t.equal(code, 2, args.join(' '))
    t.match(err.at(-1), /^usage: studio /)
  }
})

t.test('keys create --expires-in: the key works until then', async (t) => {
  const before = Date.now()
  const { code, out, key } = await cli(['keys', 'create', '--email', 'expiring@example.com', '--expires-in', '1h'])
  t.equal(code, 0)
  t.match(out[1], /expires \d{4}-/)
  const expires = Date.parse((await listed(prefixOf(key))).EXPIRES)
  t.ok(expires >= before + HOUR && expires <= Date.now() + HOUR, 'expires_at is an hour from now')
  t.equal(await status(key), 200)
  offset = 2 * HOUR
  t.equal(await status(key), 401, 'refused once the clock passes expires_at')
  offset = 0
  t.equal(await status(key), 200)
})

t.test('keys rotate: a new key for the same account and user, the old one valid for the grace', async (t) => {
  const first = await cli(['keys', 'create', '--email', 'rotor@example.com', '--name', 'Rotor', '--plan', 'PRO'])
  const old = first.key
  const me = await (await s.fetch('/api/v1/me', { key: old })).json()

  const rotated = await cli(['keys', 'rotate', prefixOf(old), '--grace', '1h'])
  t.equal(rotated.code, 0)
  t.match(rotated.out[0], new RegExp(`^key ${prefixOf(old)} rotated: it keeps working until \\d{4}-`))
  const fresh = rotated.key
  t.match(fresh, /^studio_[0-9A-Za-z]{12}_[0-9A-Za-z]{28}$/, 'the new key alone on the last line')
  t.not(prefixOf(fresh), prefixOf(old))
  t.same(await (await s.fetch('/api/v1/me', { key: fresh })).json(), me, 'same user, same plan')
  t.equal(await status(old), 200, 'the old key works during the grace')

  offset = 2 * HOUR
  await answers(t, old, 401, 'the old key fails after the grace')
  t.equal(await status(fresh), 200, 'the new key has no expiry')
  offset = 0
  t.equal(await status(old), 200, 'and only the grace bounds the old key')

  const row = await listed(prefixOf(old))
  t.not(row.EXPIRES, '-')
  t.equal(row.REVOKED, '-')
  t.equal((await listed(prefixOf(fresh))).EXPIRES, '-')
})

t.test('keys rotate --grace 0: the old key stops at once', async (t) => {
  const old = (await cli(['keys', 'create', '--plan', 'STARTER'])).key
  t.equal(await status(old), 200)
  const rotated = await cli(['keys', 'rotate', prefixOf(old), '--grace', '0', '--expires-in', '30d'])
  t.equal(rotated.code, 0)
  t.match(rotated.out[0], /it no longer works$/)
  t.match(rotated.out[1], /no user/)
  await answers(t, old, 401, 'the old key is refused')
  const r = await s.fetch('/api/v1/me', { key: rotated.key })
  t.match(await r.json(), { user: null, plan: 'STARTER' }, 'the new key has the same account and no user')
  t.not((await listed(prefixOf(rotated.key))).EXPIRES, '-', '--expires-in applies to the new key')
})

t.test('keys rotate: the default grace is 24 hours', async (t) => {
  const old = (await cli(['keys', 'create', '--plan', 'FREE'])).key
  const before = Date.now()
  t.equal((await cli(['keys', 'rotate', prefixOf(old)])).code, 0)
  const expires = Date.parse((await listed(prefixOf(old))).EXPIRES)
  t.ok(expires >= before + 24 * HOUR - 5000 && expires <= Date.now() + 24 * HOUR + 5000)
  await answers(t, old, 200, 'still works')
})

t.test('keys rotate refuses unknown and revoked keys', async (t) => {
  t.equal((await cli(['keys', 'rotate', 'AAAAAAAAAAAA'])).code, 1)
  const k = (await cli(['keys', 'create', '--plan', 'FREE'])).key
  t.equal((await cli(['keys', 'revoke', prefixOf(k)])).code, 0)
  const r = await cli(['keys', 'rotate', prefixOf(k)])
  t.equal(r.code, 1)
  t.match(r.err[0], /revoked/)
})

t.test('keys revoke from the CLI reaches the running server', async (t) => {
  const k = (await cli(['keys', 'create', '--email', 'revoked-live@example.com'])).key
  t.equal(await status(k), 200, 'cached as valid')
  t.equal((await cli(['keys', 'revoke', prefixOf(k)])).code, 0)
  await answers(t, k, 401, 'refused after the revocation')
})

t.test('keys list never shows a secret', async (t) => {
  const { out } = await cli(['keys', 'list'])
  const text = out.join('\n')
  t.ok(issuedKeys.length > 3)
  for (const k of issuedKeys) t.notOk(text.includes(k.split('_')[2]), 'no secret')
})

t.test('--help tells of the lifecycle commands', async (t) => {
  const { out } = await cli(['--help'])
  for (const word of [
    'keys rotate PREFIX [--grace D] [--expires-in D]',
    '--expires-in',
    'default 24h',
    'healthcheck',
    '90d, 24h',
  ])
    t.match(out.join('\n'), word)
})
