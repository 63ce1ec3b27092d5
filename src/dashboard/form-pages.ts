import type { Issue } from '../http/errors.js'
import { type Html, html, type Value } from './html.js'

// The pages the form endpoint shows the person who sent a form: small, escaped, the dashboard's stylesheet, no
// script. `back`: the page the form was on (its Referer), when the browser sent one.

const shell = (title: string, content: Value): Html => html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="/dashboard/assets/style.css"></head>
<body><main class="auth" id="main">${content}</main></body></html>`

const backLink = (back: string | null, label: string) => (back ? html`<p><a href="${back}">${label}</a></p>` : '')

export const thankYouPage = (back: string | null) =>
  shell(
    'Thank you',
    html`<h1>Thank you</h1><p class="lead">Your message was received.</p>${backLink(back, '← Back to the site')}`
  )

// The problems of an invalid form, each in words: the field's name and what is wrong with it.
export const invalidFormPage = (issues: Issue[], back: string | null) =>
  shell(
    'Please check the form',
    html`<h1>Please check the form</h1><p class="lead">It was not sent:</p>
<ul>${issues.map((i) => html`<li>${i.path ? html`<strong>${i.path}</strong>: ` : ''}${i.message}</li>`)}</ul>
${backLink(back, '← Back to the form')}`
  )

// Any other refusal (a file, a foreign page, too many requests, a closed form), in one sentence.
export const refusedFormPage = (title: string, message: string, back: string | null) =>
  shell(title, html`<h1>${title}</h1><p class="lead">${message}</p>${backLink(back, '← Back to the site')}`)
