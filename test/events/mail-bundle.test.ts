import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { testDatabase } from '../support/database.js'
import { eventually } from '../support/eventually.js'
import { spawnServer } from '../support/processes.js'
import { issuedKeys } from '../support/server.js'
import { smtpServer } from '../support/smtp.js'

// The bundle (dist/studio.mjs, nodemailer in its own chunk) sends a lead's mail as the service in-process does.
t.test('the bundle mails a new lead to its owner', async (t) => {
  const smtp = await smtpServer(t)
  const dbEnv = await testDatabase(t)
  const server = await spawnServer(t, { ...dbEnv, STUDIO_SMTP_URL: smtp.url, STUDIO_MAIL_FROM: 'studio@example.com' })
  const out: string[] = []
  const email = 'bundle-owner@example.com'
  t.equal(await run(['keys', 'create', '--email', email], dbEnv, { out: (l) => out.push(l), err: () => {} }), 0)
  const key = out.at(-1) ?? ''
  issuedKeys.push(key)
  const res = await fetch(`${server.url}/api/v1/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com', service: 'audit', message: 'Hello' }),
  })
  t.equal(res.status, 201)
  await eventually(() => smtp.to(email).length, { what: 'the mail' })
  t.equal(smtp.to(email)[0].subject, 'New lead: Ada')
  t.equal(await server.stop(), 0, 'SIGTERM: exit 0')
  t.match(server.output(), /"msg":"mail on","smtp":"smtp:\/\/127\.0\.0\.1:\d+"/)
  t.notMatch(server.output(), smtp.password, 'the SMTP password never reaches the log')
})
