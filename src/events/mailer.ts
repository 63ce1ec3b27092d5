import type { NodemailerError } from 'nodemailer'
import type { Config } from '../ops/config.js'
import type { MailMessage } from '../outbox/mail.js'

// The one outbound mail transport: nodemailer over STUDIO_SMTP_URL, from STUDIO_MAIL_FROM. nodemailer is loaded only
// when mail is on. What one send means: delivered (2xx), a temporary failure (a 4xx reply, no connection, a timeout,
// a login the server refused: retried), or a permanent refusal (any other 5xx reply: not retried).

export interface Sent {
  // stopped: cut short by the worker's stop before an answer; not an attempt (its claim is given back).
  result: 'delivered' | 'temporary' | 'permanent' | 'stopped'
  // The server's reply code, null when there was none (no connection).
  code: number | null
  // What happened, in our words with the reply code (shown to the account's users in the dashboard).
  answer: string
}

export interface Mail extends MailMessage {
  to: string
}

export interface Mailer {
  // The server, without the user and password: safe to log.
  server: string
  // `signal` aborts a send under way (the worker stopping); one aborted already is not started.
  send(mail: Mail, signal?: AbortSignal): Promise<Sent>
  close(): void
}

const TIMEOUT_MS = 30_000

// smtp://user:pass@host:port → smtp://host:port.
const withoutCredentials = (url: string) => {
  const u = new URL(url)
  return `${u.protocol}//${u.host}`
}

const codeOf = (reply: string) => Number(/^\d{3}/.exec(reply)?.[0]) || null

// The server's own words (and an error's message) can name its hosts and internal addresses, which the dashboard
// would show the account's users: what is stored is our words, the reply code, or nodemailer's error code.
function failure(e: NodemailerError): Sent {
  const code = e.responseCode ?? null
  if (e.code === 'EABORT') return { result: 'stopped', code, answer: 'stopped before an answer' }
  // A refused login is the operator's to fix, not the recipient's: retried until it works again.
  const login = e.code === 'EAUTH'
  const permanent = e.permanent === true && !login
  const what = login
    ? 'login refused by the mail server'
    : code === null
      ? 'no answer from the mail server'
      : permanent
        ? 'refused by the mail server'
        : 'refused for now by the mail server'
  const why = code ?? (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) ? e.code : null)
  return { result: permanent ? 'permanent' : 'temporary', code, answer: why ? `${what} (${why})` : what }
}

export async function createMailer(config: Pick<Config, 'STUDIO_SMTP_URL' | 'STUDIO_MAIL_FROM'>): Promise<Mailer> {
  const url = config.STUDIO_SMTP_URL
  const from = config.STUDIO_MAIL_FROM
  if (!url || !from) throw new Error('mail is off: STUDIO_SMTP_URL and STUDIO_MAIL_FROM are not both set')
  const { createTransport } = await import('nodemailer')
  const transport = createTransport({
    url,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    logger: false,
    disableFileAccess: true,
    disableUrlAccess: true,
  })
  return {
    server: withoutCredentials(url),
    async send(mail, signal) {
      try {
        const info = await transport.sendMail({ from, ...mail, signal })
        const code = codeOf(String(info.response ?? ''))
        return { result: 'delivered', code, answer: `accepted by the mail server${code ? ` (${code})` : ''}` }
      } catch (e) {
        return failure(e as NodemailerError)
      }
    },
    close: () => transport.close(),
  }
}
