import type { KeyListing } from '../accounts/key-lifecycle.js'
import { parseThankYou, setKeyForm } from '../accounts/key-form.js'
import { isCaptchaProvider, minScoreRefusal, secretRefusal, setKeyCaptcha } from '../accounts/key-captcha.js'
import {
  type Autoreply,
  bodyRefusal,
  keyAutoreply,
  replyToRefusal,
  setKeyAutoreply,
  subjectRefusal,
} from '../accounts/key-autoreply.js'
import { ApiError } from '../http/errors.js'
import { mailIsOn } from '../ops/config.js'
import { html, type Value } from './html.js'
import { ownKey } from './key-pages.js'
import { csrfField, page, type Viewer } from './layout.js'
import { actorOf, see, type DashboardDeps, type Page } from './page.js'

// A lead key's form setting on the dashboard (owners and admins): open to HTML forms or not, its thank-you URL, and
// the form URL with a <form> snippet to copy (the prefix only: the key's secret never goes into a page). The same
// function as `studio keys form`.

const snippet = (action: string, service: string) => `<form method="post" action="${action}">
  <label>Name <input name="name" required></label>
  <label>Email <input name="email" type="email" required></label>
  <input type="hidden" name="service" value="${service}">
  <label>Message <textarea name="message" required></textarea></label>
  <input name="website" tabindex="-1" autocomplete="off" hidden>
  <button>Send</button>
</form>`

function formPage(v: Viewer, k: KeyListing, base: string, autoreply: Value) {
  const action = `${base.replace(/\/+$/, '')}/forms/${k.prefix}`
  return page(
    v,
    'keys',
    'Key form',
    html`<h1>HTML form of key <code>${k.prefix}</code></h1><div class="card">
<p>Opened to forms, “${k.name ?? 'unnamed'}” takes leads from a plain <code>&lt;form&gt;</code> with no script on pages
of ${k.origins?.join(', ') ?? ''}. See docs/forms.md for the fields.</p>
<form method="post" action="/dashboard/keys/${k.prefix}/form">${csrfField(v)}
<div class="field"><label><input type="checkbox" name="form" value="on"${k.form ? html` checked` : ''}> Open to HTML forms</label></div>
<div class="field"><label for="thank_you">Thank-you URL (empty: the service's own page)</label>
<input id="thank_you" name="thank_you" type="url" value="${k.thank_you_url ?? ''}" placeholder="https://example.com/thanks"></div>
<div class="field"><button>Save</button> <a class="button secondary" href="/dashboard/keys">Cancel</a></div></form></div>
<div class="card"><h2>Form URL</h2><p><code>${action}</code></p>
<label for="snippet">A form to copy into your page</label>
<textarea id="snippet" readonly rows="9">${snippet(action, 'Consulting')}</textarea></div>
${captchaCard(v, k)}${autoreply}`
  )
}

// The mail each person who sends a lead gets back (accounts/key-autoreply.ts), with the Reply-To the account chooses.
function autoreplyCard(v: Viewer, k: KeyListing, a: Autoreply | null, mailOn: boolean) {
  const off = mailOn
    ? ''
    : html`<p class="muted">Mail is off on this server (STUDIO_SMTP_URL): no autoreply is sent.</p>`
  const body = a?.body ?? 'Hello {{name}},\n\nThank you for your message about {{service}}. We will answer soon.\n'
  return html`<div class="card"><h2>Autoreply</h2>
<p>A mail to each person who sends a lead${a ? '' : ' (now: none)'}: plain text with <code>{{name}}</code>,
<code>{{service}}</code> or any field's name in braces replaced by what they sent. At most one per address in 24 hours,
none for spam or an unchecked CAPTCHA (docs/forms.md).</p>${off}
<form method="post" action="/dashboard/keys/${k.prefix}/autoreply">${csrfField(v)}
<div class="field"><label for="autoreply_subject">Subject</label>
<input id="autoreply_subject" name="autoreply_subject" maxlength="200" value="${a?.subject ?? ''}" placeholder="We got your message"></div>
<div class="field"><label for="autoreply_body">Body</label>
<textarea id="autoreply_body" name="autoreply_body" rows="8">${body}</textarea></div>
<div class="field"><label for="autoreply_reply_to">Reply-To (empty: none)</label>
<input id="autoreply_reply_to" name="autoreply_reply_to" type="email" value="${a?.replyTo ?? ''}" placeholder="hello@example.com"></div>
<div class="field"><button name="autoreply" value="on">Save autoreply</button>
${a ? html` <button class="secondary" name="autoreply" value="off">Turn off</button>` : ''}</div></form></div>`
}

// The dashboard form's autoresponder, or why not.
function autoreplyOfForm(form: URLSearchParams): Autoreply | null {
  if (form.get('autoreply') === 'off') return null
  const subject = (form.get('autoreply_subject') ?? '').trim()
  const body = (form.get('autoreply_body') ?? '').replace(/\r\n/g, '\n')
  const replyTo = (form.get('autoreply_reply_to') ?? '').trim()
  const refusal = subjectRefusal(subject) ?? bodyRefusal(body) ?? (replyTo === '' ? null : replyToRefusal(replyTo))
  if (refusal) throw bad(`Autoreply: ${refusal}.`)
  return { subject, body, replyTo: replyTo === '' ? null : replyTo }
}

const PROVIDERS = [
  ['none', 'None'],
  ['turnstile', 'Cloudflare Turnstile'],
  ['hcaptcha', 'hCaptcha'],
  ['recaptcha', 'Google reCAPTCHA (v2 or v3)'],
] as const

// The CAPTCHA the key's leads must carry. The secret field is always empty: a stored secret is never sent back,
// and left empty it is kept.
function captchaCard(v: Viewer, k: KeyListing) {
  const current = k.captcha_provider ?? 'none'
  const options = PROVIDERS.map(
    ([value, label]) => html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`
  )
  const kept = k.captcha_provider ? 'stored; leave empty to keep it' : "the provider's secret key"
  return html`<div class="card"><h2>CAPTCHA</h2>
<p>Leads must carry a token of the provider's widget on your page, checked with the provider (docs/forms.md).</p>
<form method="post" action="/dashboard/keys/${k.prefix}/captcha">${csrfField(v)}
<div class="field"><label for="captcha">Provider</label><select id="captcha" name="captcha">${options}</select></div>
<div class="field"><label for="captcha_secret">Secret</label>
<input id="captcha_secret" name="captcha_secret" type="password" autocomplete="off" value="" placeholder="${kept}"></div>
<div class="field"><label for="min_score">Minimum score (reCAPTCHA v3 only, 0 to 1; empty: any)</label>
<input id="min_score" name="min_score" type="number" min="0" max="1" step="0.1" value="${k.captcha_min_score ?? ''}"></div>
<div class="field"><button>Save CAPTCHA</button></div></form></div>`
}

// The dashboard form's CAPTCHA, or why not.
function captchaOf(form: URLSearchParams) {
  const provider = form.get('captcha') ?? 'none'
  if (provider === 'none') return null
  if (!isCaptchaProvider(provider)) throw bad('Provider: choose one of the list.')
  const secretText = (form.get('captcha_secret') ?? '').trim()
  const refusal = secretText === '' ? null : secretRefusal(secretText)
  if (refusal) throw bad(`Secret: ${refusal}.`)
  const scoreText = (form.get('min_score') ?? '').trim()
  const minScore = scoreText === '' || provider !== 'recaptcha' ? null : Number(scoreText)
  const scoreRefusal = minScore === null ? null : minScoreRefusal(minScore)
  if (scoreRefusal) throw bad(`Minimum score: ${scoreRefusal}.`)
  return { provider, minScore, ...(secretText !== '' && { secret: secretText }) }
}

const bad = (message: string) => new ApiError({ code: 'bad_request', message })

export function keyFormPages(deps: DashboardDeps): Page[] {
  const path = '/dashboard/keys/:prefix/form'
  return [
    {
      method: 'GET',
      path,
      access: 'admin',
      async handle(ctx) {
        const k = await ownKey(deps.sql, ctx.user, ctx.params.prefix)
        const autoreply = autoreplyCard(ctx.user, k, await keyAutoreply(deps.sql, k.prefix), mailIsOn(deps.config))
        return formPage(ctx.user, k, deps.publicUrl(), autoreply)
      },
    },
    {
      method: 'POST',
      path,
      access: 'admin',
      async handle(ctx) {
        const text = (ctx.form.get('thank_you') ?? '').trim()
        const parsed = text === '' ? { url: null } : parseThankYou(text)
        if ('error' in parsed) throw new ApiError({ code: 'bad_request', message: `Thank-you URL: ${parsed.error}.` })
        const r = await setKeyForm(deps.sql, {
          prefix: ctx.params.prefix,
          change: { open: ctx.form.get('form') === 'on', thankYou: parsed.url },
          accountId: ctx.user.accountId,
          actor: actorOf(ctx),
        })
        if (!r.ok && r.reason === 'not_found')
          throw new ApiError({ code: 'not_found', message: 'There is no such key in your account.' })
        if (!r.ok)
          throw new ApiError({
            code: 'bad_request',
            message: 'Only a key whose only scope is leads:write, with origins, takes forms.',
          })
        return see('/dashboard/keys?done=form')
      },
    },
    {
      method: 'POST',
      path: '/dashboard/keys/:prefix/captcha',
      access: 'admin',
      async handle(ctx) {
        const r = await setKeyCaptcha(deps.sql, {
          prefix: ctx.params.prefix,
          captcha: captchaOf(ctx.form),
          accountId: ctx.user.accountId,
          actor: actorOf(ctx),
        })
        if (!r.ok && r.reason === 'not_found')
          throw new ApiError({ code: 'not_found', message: 'There is no such key in your account.' })
        if (!r.ok) throw bad("Secret: give the provider's secret key.")
        return see('/dashboard/keys?done=captcha')
      },
    },
    {
      method: 'POST',
      path: '/dashboard/keys/:prefix/autoreply',
      access: 'admin',
      async handle(ctx) {
        const r = await setKeyAutoreply(deps.sql, {
          prefix: ctx.params.prefix,
          autoreply: autoreplyOfForm(ctx.form),
          accountId: ctx.user.accountId,
          actor: actorOf(ctx),
        })
        if (!r.ok && r.reason === 'not_found')
          throw new ApiError({ code: 'not_found', message: 'There is no such key in your account.' })
        if (!r.ok) throw bad('Only a key with the scope leads:write sends autoreplies.')
        return see('/dashboard/keys?done=autoreply')
      },
    },
  ]
}
