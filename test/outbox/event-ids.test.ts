import t from 'tap'
import { eventId } from '../../src/outbox/event.js'
import { randomBase64url } from '../../src/storage/random-ids.js'

t.test('event ids: 16 random bytes each, none repeated across refills of the pool they are cut from', async (t) => {
  const ids = Array.from({ length: 2000 }, eventId)
  t.equal(new Set(ids).size, ids.length)
  t.ok(
    ids.every((id) => /^evt_[\w-]{22}$/.test(id)),
    'evt_ and the base64url of 16 bytes'
  )
})

t.test('a token of any length, across the end of the pool', async (t) => {
  const tokens = Array.from({ length: 1000 }, (_, i) => randomBase64url(1 + (i % 40)))
  t.ok(tokens.every((s, i) => Buffer.from(s, 'base64url').length === 1 + (i % 40)))
  t.equal(new Set(tokens.filter((s) => s.length > 10)).size, tokens.filter((s) => s.length > 10).length)
})

t.test('a token longer than the pool comes whole', async (t) => {
  t.equal(Buffer.from(randomBase64url(5000), 'base64url').length, 5000)
})
