import type { Autoreply } from '../accounts/key-autoreply.js'
import type { EventData } from '../outbox/catalogue.js'
import type { DisabledEndpoint } from '../events/deliveries.js'
import type { MailMessage } from '../outbox/mail.js'
import { mailIsOn } from '../ops/config.js'
import { html, type Value } from './html.js'
import type { DashboardDeps } from './page.js'

// What the service's mails say: a new lead (every field, the extra ones under their own names, as plain text and as simple HTML where every value is
// escaped by html.ts, and a link to the lead in the dashboard), a lead assigned to its recipient, a disabled webhook
// endpoint, and a sign-in link or an invitation.

type Lead = EventData<'lead.created'>

const FIELDS: [string, (l: Lead) => string | undefined][] = [
  ['Name', (l) => l.name],
  ['Email', (l) => l.email],
  ['Company', (l) => l.company],
  ['Phone', (l) => l.phone],
  ['Service', (l) => l.service],
  ['Budget', (l) => l.budget],
  ['Locale', (l) => l.locale],
  ['Source', (l) => l.source],
  ['UTM source', (l) => l.utm?.source],
  ['UTM medium', (l) => l.utm?.medium],
  ['UTM campaign', (l) => l.utm?.campaign],
  ['Received', (l) => l.createdAt],
  ['Key', (l) => l.keyPrefix],
]

// A header's text on one line (a lead's name goes into the subject).
const oneLine = (s: string, max: number) =>
  s
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
    .trim()
    .slice(0, max)

const FONT = 'font-family:system-ui,sans-serif;line-height:1.5;color:#111'
const page = (body: Value) => html`<!doctype html><html><body style="${FONT}">${body}</body></html>`.text

// A mail's labelled values, as a table.
const table = (rows: (readonly [string, Value])[]) =>
  html`<table cellpadding="4">${rows.map(([label, v]) => html`<tr><th align="left">${label}</th><td>${v}</td></tr>`)}
</table>`

// A mail's last lines: the link to its page of the dashboard (`path` below /dashboard/), none with the dashboard off.
function openInDashboard(dashboard: () => string | null, path: string) {
  const base = dashboard()
  if (base === null) return { text: [], html: '' }
  const link = `${base.replace(/\/+$/, '')}/dashboard/${path}`
  const open = 'Open it in the dashboard'
  return { text: ['', `${open}: ${link}`], html: html`<p><a href="${link}">${open}</a></p>` }
}

// `dashboard`: the dashboard's base URL (STUDIO_PUBLIC_URL or the listener's), null when the dashboard is off.
export const leadMail =
  (dashboard: () => string | null) =>
  (lead: Lead): MailMessage => {
    const open = openInDashboard(dashboard, `leads/${lead.id}`)
    const named = FIELDS.map(([label, of]) => [label, of(lead)] as const)
    const rows = [...named, ...Object.entries(lead.fields ?? {})].filter(([, v]) => v)
    const text = [
      'A new lead arrived through the Studio API.',
      '',
      ...rows.map(([label, value]) => `${label}: ${value}`),
      '',
      'Message:',
      lead.message,
      ...open.text,
      '',
    ].join('\n')
    const body = html`<p>A new lead arrived through the Studio API.</p>${table(rows)}
<h3>Message</h3><p style="white-space:pre-wrap">${lead.message}</p>${open.html}`
    return { subject: `New lead: ${oneLine(lead.name, 120)}`, text, html: page(body) }
  }

// A placeholder of an autoresponder's text: {{name}}, {{ service }}, an extra field's name.
const PLACEHOLDER = /\{\{\s*([^{}\s]{1,64})\s*\}\}/g

// The lead's value a placeholder names: a field of the lead, utm_source/utm_medium/utm_campaign, or an extra
// field; anything else, nothing.
const NAMED = new Set(['name', 'email', 'service', 'message', 'phone', 'company', 'budget', 'locale', 'source'])
const UTM = new Set(['utm_source', 'utm_medium', 'utm_campaign'])
function placeholderValue(lead: Lead, name: string): string {
  if (UTM.has(name)) return lead.utm?.[name.slice(4) as 'source' | 'medium' | 'campaign'] ?? ''
  if (NAMED.has(name)) return (lead[name as keyof Lead] as string | undefined) ?? ''
  return (lead.fields && Object.hasOwn(lead.fields, name) ? lead.fields[name] : '') ?? ''
}

// The account's text with the lead's values in its placeholders, as pieces: what the account wrote and each value,
// so that the HTML escapes both.
const filled = (text: string, lead: Lead) => {
  const pieces: string[] = []
  let at = 0
  for (const m of text.matchAll(PLACEHOLDER)) {
    pieces.push(text.slice(at, m.index), placeholderValue(lead, m[1]))
    at = m.index + m[0].length
  }
  pieces.push(text.slice(at))
  return pieces
}

// The autoresponder's mail to the person who wrote: the key's subject and body with the lead's values, as plain text
// and as simple HTML where every piece is escaped by html.ts.
export function autoreplyMail(autoreply: Autoreply, lead: Lead): MailMessage {
  const body = filled(autoreply.body, lead)
  return {
    subject: oneLine(filled(autoreply.subject, lead).join(''), 200),
    text: `${body.join('').replace(/\r\n/g, '\n')}\n`,
    html: page(html`<p style="white-space:pre-wrap">${body}</p>`),
  }
}

// A lead was given to the mail's recipient (its lead.updated event: who did it, and its status if that changed too).
// Nothing of the lead's own data: the link opens it.
export const assignedMail =
  (dashboard: () => string | null) =>
  (update: EventData<'lead.updated'>): MailMessage => {
    const open = openInDashboard(dashboard, `leads/${update.id}`)
    const by = update.who ?? (update.keyPrefix ? `An API key (${update.keyPrefix})` : 'Someone')
    const what = `${by} assigned a lead to you on Studio.`
    const status = update.changes.status?.after
    const rows = status ? [['Status', status] as const] : []
    const text = [what, ...(status ? ['', `Status: ${status}`] : []), ...open.text, '']
    const body = html`<p>${what}</p>${rows.length ? table(rows) : ''}${open.html}`
    return { subject: 'A lead was assigned to you', text: text.join('\n'), html: page(body) }
  }

// The delivery worker disabled a webhook endpoint (a 410, or five days of failures): to the account's owners and
// admins.
export const disabledEndpointMail =
  (dashboard: () => string | null) =>
  (endpoint: DisabledEndpoint): MailMessage => {
    const open = openInDashboard(dashboard, `webhooks/${endpoint.id}`)
    const what = 'A webhook endpoint of your Studio account was disabled, and receives no more events.'
    const then = 'Enable it again on the dashboard once it answers; events made while it was disabled are not sent.'
    const text = [what, '', `Endpoint: ${endpoint.url}`, `Why: ${endpoint.reason}`, '', then, ...open.text, '']
    const rows = [['Endpoint', endpoint.url] as const, ['Why', endpoint.reason] as const]
    const body = html`<p>${what}</p>${table(rows)}<p>${then}</p>${open.html}`
    return { subject: 'A webhook endpoint was disabled', text: text.join('\n'), html: page(body) }
  }

export interface Invitation {
  by: string
  role: string
}

// A one-time sign-in link: asked for, handed out from Team, or an invitation to the account (`invitation` set).
function linkMessage(link: string, invitation?: Invitation): MailMessage {
  const what = invitation
    ? `${invitation.by} invited you to their account on the Studio dashboard, as ${invitation.role}.`
    : 'Here is your link to sign in to the Studio dashboard.'
  const then = 'Open it within 24 hours to choose a password and sign in. It works once.'
  const text = `${what}\n\n${link}\n\n${then}\nIf you did not expect this mail, ignore it.\n`
  const body = html`<p>${what}</p><p><a href="${link}">${link}</a></p><p>${then}<br>
If you did not expect this mail, ignore it.</p>`
  return {
    subject: invitation ? 'You are invited to Studio' : 'Your Studio sign-in link',
    text,
    html: page(body),
  }
}

// With mail on, the mail of a new sign-in link (or invitation) to its user; the page shows the link as well.
export const linkMail = (deps: Pick<DashboardDeps, 'config'>, url: string, invitation?: Invitation) =>
  mailIsOn(deps.config)
    ? { kind: invitation ? ('invite' as const) : ('signin' as const), message: linkMessage(url, invitation) }
    : undefined
