import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { mailIsOn, parseConfig } from '../../src/ops/config.js'

// STUDIO_SMTP_URL and STUDIO_MAIL_FROM: both turn mail on, neither leaves it off, and a bad value is one line at
// start naming the variable (exit 2), never echoing the SMTP URL (its password).
const FROM = 'Studio <studio@example.com>'

async function refused(env: Record<string, string>) {
  const err: string[] = []
  const code = await run(['migrate'], env, { out: () => {}, err: (l) => err.push(l) })
  return { code, err }
}

t.test('both set: mail on; neither: off', async (t) => {
  for (const url of ['smtp://user:pass@mail.example.com:587', 'smtps://u:p%40ss@127.0.0.1:465', 'smtp://[::1]:25']) {
    const config = parseConfig({ STUDIO_SMTP_URL: url, STUDIO_MAIL_FROM: FROM })
    t.ok(mailIsOn(config), url)
  }
  t.ok(mailIsOn(parseConfig({ STUDIO_SMTP_URL: 'smtp://h:25', STUDIO_MAIL_FROM: 'plain@example.com' })))
  t.notOk(mailIsOn(parseConfig({})))
})

t.test('a bad or half mail setting is a start-up error naming the variable, without the password', async (t) => {
  for (const [env, name] of [
    [{ STUDIO_SMTP_URL: 'http://user:hunter2@mail.example.com' }, 'STUDIO_SMTP_URL'],
    [{ STUDIO_SMTP_URL: 'smtp://user:hunter2@mail.example.com:port' }, 'STUDIO_SMTP_URL'],
    [{ STUDIO_SMTP_URL: 'smtp://user:hunter2@:25' }, 'STUDIO_SMTP_URL'],
    [{ STUDIO_SMTP_URL: 'smtp://user:hunter2@mail.example.com:25' }, 'STUDIO_MAIL_FROM'],
    [{ STUDIO_MAIL_FROM: FROM }, 'STUDIO_SMTP_URL'],
    [{ STUDIO_SMTP_URL: 'smtp://user:hunter2@h:25', STUDIO_MAIL_FROM: 'not an address' }, 'STUDIO_MAIL_FROM'],
    [{ STUDIO_SMTP_URL: 'smtp://user:hunter2@h:25', STUDIO_MAIL_FROM: 'A <a@b.c>\r\nBcc: x@y.z' }, 'STUDIO_MAIL_FROM'],
  ] as const) {
    const { code, err } = await refused(env)
    t.equal(code, 2, JSON.stringify(env))
    t.equal(err.length, 1)
    t.match(err[0], new RegExp(`^studio: invalid configuration: ${name}: `))
    t.notMatch(err[0], 'hunter2')
  }
})
