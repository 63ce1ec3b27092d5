import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import type { Teardown } from './teardown.js'

// A real SMTP server (smtp-server) in the test process on port 0: it asks for a login, records every mail it takes
// (decoded: subject, text and HTML parts) and refuses a recipient when `refuse` says so, e.g. 451 then accepted.
// `hold` keeps new connections waiting for their greeting (a send begun, nothing sent) until it is released.

interface ReceivedMail {
  from: string
  to: string[]
  raw: string
  headers: Map<string, string>
  subject: string
  text: string
  html: string
}

// The first reply to give a recipient's nth RCPT TO instead of 250, or null to accept.
type Refuse = (to: string, n: number) => { code: number; message: string } | null

// Every SMTP password a test server used, so a test can prove none reached a log.
export const smtpPasswords: string[] = []

export async function smtpServer(t: Teardown, refuse: Refuse = () => null) {
  const password = `smtp-secret-${randomBytes(9).toString('base64url')}`
  smtpPasswords.push(password)
  const got: ReceivedMail[] = []
  const tries = new Map<string, number>()
  const sessions = { opened: 0, closed: 0 }
  let gate: Promise<void> | null = null
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onConnect(_, done) {
      sessions.opened++
      if (gate) gate.then(() => done())
      else done()
    },
    onClose: () => void sessions.closed++,
    onAuth: (auth, _, done) =>
      auth.username === 'studio' && auth.password === password
        ? done(null, { user: 'studio' })
        : done(Object.assign(new Error('Authentication failed'), { responseCode: 535 })),
    onRcptTo(address, _, done) {
      const n = (tries.get(address.address) ?? 0) + 1
      tries.set(address.address, n)
      const no = refuse(address.address, n)
      done(no ? Object.assign(new Error(no.message), { responseCode: no.code }) : null)
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : ''
        got.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw, ...decode(raw) })
        done()
      })
    },
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(() => new Promise<void>((ok) => server.close(() => ok())))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://studio:${password}@127.0.0.1:${port}`,
    password,
    got,
    sessions,
    to: (address: string) => got.filter((m) => m.to.includes(address)),
    hold(t: Teardown) {
      let open = () => {}
      gate = new Promise<void>((ok) => (open = ok))
      const release = () => {
        gate = null
        open()
      }
      t.teardown(release)
      return release
    },
  }
}

// --- A small MIME reader: enough for what nodemailer writes (multipart, quoted-printable, base64, encoded words).

function quotedPrintable(s: string): string {
  const soft = s.replace(/=\r?\n/g, '')
  const bytes: number[] = []
  for (let i = 0; i < soft.length; i++) {
    const hex = soft[i] === '=' ? soft.slice(i + 1, i + 3) : ''
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16))
      i += 2
    } else bytes.push(...Buffer.from(soft[i], 'utf8'))
  }
  return Buffer.from(bytes).toString('utf8')
}

const words = (s: string) =>
  s
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?[^?]+\?([QqBb])\?([^?]*)\?=/g, (_, enc: string, data: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : quotedPrintable(data.replace(/_/g, ' '))
    )

function headersOf(block: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon > 0) out.set(line.slice(0, colon).trim().toLowerCase(), words(line.slice(colon + 1).trim()))
  }
  return out
}

function parts(raw: string): { type: string; body: string }[] {
  const split = raw.search(/\r?\n\r?\n/)
  const headers = headersOf(raw.slice(0, split))
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '')
  const type = headers.get('content-type') ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1]
  if (type.startsWith('multipart/') && boundary)
    return body
      .split(`--${boundary}`)
      .slice(1, -1)
      .flatMap((p) => parts(p.replace(/^\r?\n/, '').replace(/\r?\n$/, '')))
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase()
  const decoded =
    encoding === 'base64'
      ? Buffer.from(body, 'base64').toString('utf8')
      : encoding === 'quoted-printable'
        ? quotedPrintable(body)
        : body
  return [{ type: type.split(';')[0].trim().toLowerCase(), body: decoded.replace(/\r\n/g, '\n') }]
}

function decode(raw: string) {
  const headers = headersOf(raw.slice(0, raw.search(/\r?\n\r?\n/)))
  const all = parts(raw)
  const of = (type: string) => all.find((p) => p.type === type)?.body ?? ''
  return { headers, subject: headers.get('subject') ?? '', text: of('text/plain'), html: of('text/html') }
}
