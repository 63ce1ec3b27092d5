import t from 'tap'
import { hashPassword, verifyPassword } from '../../src/accounts/passwords.js'

t.test('a password verifies against its own hash only', async (t) => {
  const stored = await hashPassword('correct horse battery')
  t.match(stored, /^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{86}$/)
  t.equal(await verifyPassword('correct horse battery', stored), true)
  t.equal(await verifyPassword('correct horse batterY', stored), false)
})

t.test('without a user (no stored hash) nothing verifies', async (t) => {
  t.equal(await verifyPassword('correct horse battery', null), false)
  t.equal(await verifyPassword('', null), false)
})
