import t from 'tap'
import { createKey, revokeKey, rotateKey } from '../../src/accounts/key-lifecycle.js'
import { run } from '../../src/cli/cli.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { receiver } from '../support/receiver.js'
import { startTestServer } from '../support/server.js'

// key.created, key.rotated and key.revoked are written in the key change's transaction, with no secret, and delivered.
const dbEnv = await testDatabase(t)
const { sql } = await openTestDatabase(t, dbEnv)
const events = async () =>
  (await sql<{ type: string; body: string }[]>`select type, body from events order by created_at, id`).map((e) => ({
    type: e.type,
    data: JSON.parse(e.body).data,
    body: e.body,
  }))

t.test('create, rotate and revoke each make their event; revoking twice makes one', async (t) => {
  const who = { kind: 'user', email: 'owner@example.com', address: null } as const
  const k = await createKey(sql, { email: 'owner@example.com', keyName: 'site' }, who)
  const r = await rotateKey(sql, { prefix: k.prefix, graceSeconds: 0, actor: who })
  t.ok(await revokeKey(sql, r?.prefix as string, who))
  t.ok(await revokeKey(sql, r?.prefix as string, who), 'already revoked: still true')
  const got = await events()
  t.same(
    got.map((e) => [e.type, e.data]),
    [
      ['key.created', { prefix: k.prefix, name: 'site', who: 'owner@example.com' }],
      ['key.rotated', { prefix: k.prefix, name: 'site', who: 'owner@example.com', newPrefix: r?.prefix }],
      ['key.revoked', { prefix: r?.prefix, name: 'site', who: 'owner@example.com' }],
    ]
  )
  for (const key of [k.key, r?.key as string])
    t.notOk(
      got.some((e) => e.body.includes(key.split('_').at(-1) as string)),
      'no secret in an event'
    )
})

t.test('a key change made with no actor still has its event, with who = null', async (t) => {
  const k = await createKey(sql, { email: 'setup@example.com', keyName: 'set up' })
  const [last] = (await events()).slice(-1)
  t.same([last.type, last.data], ['key.created', { prefix: k.prefix, name: 'set up', who: null }])
})

t.test('the CLI records its key changes with who = null', async (t) => {
  const out: string[] = []
  const io = { out: (l: string) => out.push(l), err: () => {} }
  t.equal(await run(['keys', 'create', '--email', 'cli@example.com'], dbEnv, io), 0)
  const [last] = (await events()).slice(-1)
  t.same([last.type, last.data.who], ['key.created', null])
})

t.test('key.* events are delivered to an endpoint as the document describes them', async (t) => {
  await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { dbEnv, webhooks: { pollMs: 20 } })
  const who = { kind: 'user', email: 'hooks@example.com', address: null } as const
  const k = await createKey(sql, { email: 'hooks@example.com', keyName: 'hooked' }, who)
  const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`
    select account_id from users where email = 'hooks@example.com'`
  const r = await receiver(t)
  await addEndpoint(sql, { accountId, url: r.url, events: ['key.created', 'key.rotated', 'key.revoked'] }, true)
  const rotated = await rotateKey(sql, { prefix: k.prefix, graceSeconds: 0, actor: who })
  await revokeKey(sql, rotated?.prefix as string, who)
  const second = await createKey(sql, { email: 'hooks@example.com', keyName: 'second' }, who)
  await eventually(() => r.got.length === 3, { what: 'three deliveries' })
  const got = r.got.map((g) => JSON.parse(g.body)).sort((a, b) => a.type.localeCompare(b.type))
  t.same(
    got.map((e) => [e.type, e.data.prefix, e.data.newPrefix]),
    [
      ['key.created', second.prefix, undefined],
      ['key.revoked', rotated?.prefix, undefined],
      ['key.rotated', k.prefix, rotated?.prefix],
    ]
  )
})

const skip = process.env.DATABASE_URL ? false : 'needs DATABASE_URL (a row lock held from a second connection)'

t.test('revokes waiting on one key make one key.revoked between them', { skip }, async (t) => {
  const who = { kind: 'user', email: 'racing@example.com', address: null } as const
  const k = await createKey(sql, { email: 'racing@example.com', keyName: 'raced' }, who)
  let release = () => {}
  const held = new Promise<void>((ok) => {
    release = ok
  })
  const locking = sql.begin(async (tx) => {
    await tx`select 1 from api_keys where prefix = ${k.prefix} for update`
    await held
  })
  const revokes = Array.from({ length: 4 }, () => revokeKey(sql, k.prefix, who))
  await eventually(
    async () => {
      const [{ n }] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_locks l join pg_stat_activity a using (pid)
        where not l.granted and a.datname = current_database()`
      return n >= 4
    },
    { what: 'four revokes waiting on the row' }
  )
  release()
  await locking
  t.same(await Promise.all(revokes), [true, true, true, true])
  const revoked = (await events()).filter((e) => e.type === 'key.revoked' && e.data.prefix === k.prefix)
  t.equal(revoked.length, 1, 'one event')
})
