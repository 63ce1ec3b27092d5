import type { KeyListing } from '../accounts/key-lifecycle.js'
import { parseThankYou, setKeyForm } from '../accounts/key-form.js'
import { ApiError } from '../http/errors.js'
import { html } from './html.js'
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

function formPage(v: Viewer, k: KeyListing, base: string) {
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
<textarea id="snippet" readonly rows="9">${snippet(action, 'Consulting')}</textarea></div>`
  )
}

export function keyFormPages(deps: DashboardDeps): Page[] {
  const path = '/dashboard/keys/:prefix/form'
  return [
    {
      method: 'GET',
      path,
      access: 'admin',
      handle: async (ctx) => formPage(ctx.user, await ownKey(deps.sql, ctx.user, ctx.params.prefix), deps.publicUrl()),
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
  ]
}
