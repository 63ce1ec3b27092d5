import t from 'tap'
import { eventId } from '../../src/outbox/event.js'

t.test('event ids: evt_ and 16 random bytes, none repeated', async (t) => {
  const ids = Array.from({ length: 2000 }, eventId)
  t.equal(new Set(ids).size, ids.length)
  t.ok(
    ids.every((id) => /^evt_[\w-]{22}$/.test(id)),
    'evt_ and the base64url of 16 bytes'
  )
})
