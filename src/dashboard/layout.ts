import { html, type Html, type Value } from './html.js'

export interface Viewer {
  email: string
  name: string | null
  role: string
  csrf: string
}

const SECTIONS = [
  ['keys', 'API keys'],
  ['leads', 'Leads'],
  ['usage', 'Usage'],
  ['webhooks', 'Webhooks'],
  ['team', 'Team'],
  ['audit', 'Audit log'],
  ['account', 'Account'],
] as const

export type Section = (typeof SECTIONS)[number][0]

export const canManage = (role: string) => role === 'owner' || role === 'admin'
// Sections only owners and admins see (their pages are `access: 'admin'`).
const MANAGERS_ONLY: readonly Section[] = ['webhooks', 'team', 'audit']

const head = (title: string) => html`<head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Studio</title>
<link rel="stylesheet" href="/dashboard/assets/style.css">
<link rel="icon" href="/dashboard/assets/icon.svg" type="image/svg+xml">
<script src="/dashboard/assets/app.js" defer></script></head>`

export const csrfField = (v: Viewer) => html`<input type="hidden" name="csrf" value="${v.csrf}">`

// A signed-in page: side navigation (Webhooks, Team and Audit log only for owners and admins), who is signed in, and
// the section's content.
export function page(v: Viewer, section: Section, title: string, content: Value): Html {
  const links = SECTIONS.filter(([s]) => !MANAGERS_ONLY.includes(s) || canManage(v.role)).map(
    ([s, label]) => html`<a href="/dashboard/${s}"${s === section ? html` aria-current="page"` : ''}>${label}</a>`
  )
  return html`<html lang="en">${head(title)}<body>
<a class="skip" href="#main">Skip to content</a>
<div class="shell"><aside class="side"><div class="side-in"><a class="brand" href="/dashboard"><span>◆</span> Studio</a>
<nav aria-label="Sections">${links}</nav>
<div class="who"><div>${v.name ?? v.email}</div><div>${v.email} · ${v.role}</div>
<form method="post" action="/dashboard/signout">${csrfField(v)}<button class="secondary small">Sign out</button></form>
</div></div></aside>
<main id="main">${content}</main></div></body></html>`
}

// A page outside the console (sign-in, set a password, errors).
export const bare = (title: string, content: Value): Html =>
  html`<html lang="en">${head(title)}<body><main class="auth" id="main">
<p><a class="brand" href="/dashboard"><span>◆</span> Studio</a></p>${content}</main></body></html>`

export const empty = (title: string, next: Value) => html`<div class="empty"><strong>${title}</strong>${next}</div>`

const NOTICES: Record<string, string> = {
  revoked: 'The key was revoked. Servers refuse it within a second.',
  limited: "The key's limits were saved. Servers apply them within a second.",
  form: "The key's form setting was saved.",
  captcha: "The key's CAPTCHA was saved.",
  autoreply: "The key's autoreply was saved.",
  password: 'Your password was changed. Your other sessions were signed out.',
  everywhere: 'Every other session was signed out.',
  role: 'The role was changed.',
  removed: 'The user was removed and their keys revoked.',
  'webhook-test': 'A test event is on its way; its attempt shows in the delivery log below within seconds.',
  'webhook-resent': 'The event is sent again; its new attempts show in the delivery log below.',
  'webhook-disabled': 'The endpoint is disabled: it receives nothing, and its pending deliveries were cancelled.',
  'webhook-enabled': 'The endpoint is enabled: it receives the events made from now on.',
  'webhook-deleted': 'The endpoint was deleted with its delivery log.',
  'lead-mail': 'Your email choice was saved.',
  budget: "The account's monthly budget was saved. Servers apply it within a second.",
  retention: "The account's lead retention was saved.",
  'assigned-mail': 'Your choice of a mail for assigned leads was saved.',
  'lead-saved': "The lead's status and assignee were saved.",
  'note-added': 'The note was added.',
  'lead-erased': 'The lead was erased, with its data wherever the service kept it.',
  'leads-erased': 'Every lead from that address was erased, with its data wherever the service kept it.',
  'link-sent': 'If that address has an account here, a sign-in link is on its way to it. It works once, for 24 hours.',
}

// A fixed message after a POST-redirect-GET (?done=word): never text from the request itself.
export const notice = (done: string | null) => {
  const text = done ? NOTICES[done] : undefined
  return text ? html`<div class="notice" role="status">${text}</div>` : ''
}

// A secret shown once (a new key, a sign-in link), with a copy button that the script reveals.
export const secretBox = (id: string, value: string) => html`<div class="secret"><code id="${id}">${value}</code>
<button type="button" class="secondary small" data-copy="${id}" hidden>Copy</button></div>`

// A secret in the one response that made it (a new key, a webhook signing secret), in the box `id`; `note` says more
// (how long the old one still works).
export const shownOnce = (id: string, title: string, secret: string, note: Value = '') =>
  html`<div class="notice warn" role="alert">
<strong>${title}</strong> ${note} Copy it now: it is shown this once and never again.
${secretBox(id, secret)}</div>`

export interface Confirmation {
  title: string
  // The page's heading, when it says more than its title.
  heading?: Value
  // What will happen, and that it cannot be undone.
  body: Value
  // Where the confirmed form goes (it sends `confirm=yes`), its button, and where Cancel leads.
  action: string
  button: string
  cancel: string
}

// The confirmation step of a change that cannot be undone: a page of its own, so that it works without script.
export const confirmStep = (v: Viewer, section: Section, c: Confirmation) =>
  page(
    v,
    section,
    c.title,
    html`<h1>${c.heading ?? c.title}</h1><div class="card">${c.body}
<form method="post" action="${c.action}" class="row">${csrfField(v)}
<input type="hidden" name="confirm" value="yes"><button class="danger">${c.button}</button>
<a class="button secondary" href="${c.cancel}">Cancel</a></form></div>`
  )

// What was wrong with the form just sent, above it.
export const errorBanner = (message: Value) => html`<div class="notice error" role="alert">${message}</div>`

// A UTC time to the minute (to the second with `seconds`).
export const when = (d: Date | null | undefined, seconds = false) =>
  d
    ? d
        .toISOString()
        .slice(0, seconds ? 19 : 16)
        .replace('T', ' ')
    : '—'

// A UTC day, short enough for a table's cell ("29 Nov 2026"), with the time to the minute in its title.
export const day = (d: Date | null | undefined) =>
  d
    ? html`<time datetime="${d.toISOString()}" title="${when(d)} UTC">${d.toLocaleDateString('en-GB', {
        day: 'numeric',
        month: 'short',
        year: 'numeric',
        timeZone: 'UTC',
      })}</time>`
    : '—'
