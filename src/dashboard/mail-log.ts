import type { MailLogLine } from '../events/mail-deliveries.js'
import { html } from './html.js'
import { empty, when } from './layout.js'

// The account's email deliveries (Webhooks section): the latest attempts, so that owners see a refused or bounced
// mail and why (the SMTP reply code, in our words: mailer.ts).

const KINDS: Record<string, string> = {
  lead: 'new lead',
  signin: 'sign-in link',
  invite: 'invitation',
  endpoint: 'endpoint disabled',
  autoreply: 'autoreply',
  assigned: 'lead assigned',
}

// Why an autoreply was not sent (leads/autoreply.ts).
const SKIPPED: Record<string, string> = {
  captcha_unverified: 'Not sent: the CAPTCHA could not be checked with its provider',
  recent: 'Not sent: this address had an autoreply in the last 24 hours',
  daily_limit: "Not sent: the key's autoreplies for today (STUDIO_AUTOREPLY_DAILY_LIMIT) were all sent",
}

function outcome(l: MailLogLine) {
  if (l.outcome === 'delivered') return html`<span class="badge active">delivered</span>`
  if (l.outcome === 'retry') return html`<span class="badge grace">will retry</span>`
  if (l.outcome === 'skipped') return html`<span class="badge expired">skipped</span>`
  return html`<span class="badge failed">${l.code !== null && l.code >= 500 ? 'refused' : 'gave up'}</span>`
}

export function mailLogCard(lines: MailLogLine[], mailOn: boolean) {
  if (!mailOn && !lines.length) return ''
  const rows = lines.map(
    (l) => html`<tr><td class="time">${when(l.at)}</td><td>${l.recipient}</td><td>${KINDS[l.kind] ?? l.kind}</td>
<td>${outcome(l)}</td><td class="muted">${l.outcome === 'skipped' ? (SKIPPED[l.answer] ?? l.answer) : l.answer}</td></tr>`
  )
  return html`<h2>Email deliveries</h2><p class="lead">The latest mails this account's users were sent (new leads,
leads assigned, sign-in links, invitations, a webhook endpoint disabled, autoreplies to the people who wrote, and
the autoreplies not sent, with why) and what the mail server answered; a refused mail is not sent again.</p>
${
  lines.length
    ? html`<div class="table-wrap scroll-x"><table><thead><tr><th>Time</th><th>To</th><th>Mail</th><th>Outcome</th>
<th>Server's reply</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<div class="table-wrap">${empty('No mail yet', html`<p>Mails appear here as they are sent.</p>`)}</div>`
}`
}
