import {
  createKey,
  type KeyListing,
  listKeys,
  ROTATE_GRACE_SECONDS,
  revokeKey,
  rotateKey,
} from '../accounts/key-lifecycle.js'
import { type KeyLimits, parseModels } from '../accounts/key-limits.js'
import { parseScopes, SCOPES, type Scope } from '../accounts/scopes.js'
import { originsRefusal, parseOrigins } from '../accounts/origins.js'
import type { SessionUser } from '../accounts/sessions.js'
import { usageByKey } from '../accounts/usage.js'
import { ApiError } from '../http/errors.js'
import { configuredAliases } from '../ops/model-aliases.js'
import { keyUsage } from '../quota/key-counts.js'
import { monthOf } from '../quota/month.js'
import type { Sql } from '../storage/db.js'
import { html, type Html } from './html.js'
import { canManage, confirmStep, csrfField, day, empty, notice, page, shownOnce, when, type Viewer } from './layout.js'
import { actorOf, see, type DashboardDeps, type Page, type PageCtx } from './page.js'

const EXPIRIES: [string, string][] = [
  ['', 'Never'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', '365 days'],
]
const GRACES: [string, string][] = [
  ['0', 'No time: it stops at once'],
  ['3600', '1 hour'],
  ['86400', '24 hours'],
  ['604800', '7 days'],
]

// Owners and admins see every key of the account; a member only the keys they created.
const keysOf = (sql: Sql, u: SessionUser) =>
  listKeys(sql, { accountId: u.accountId, createdBy: canManage(u.role) ? undefined : u.userId })

export async function ownKey(sql: Sql, u: SessionUser, prefix: string): Promise<KeyListing> {
  const [row] = (await keysOf(sql, u)).filter((k) => k.prefix === prefix)
  if (!row)
    throw new ApiError({
      code: 'not_found',
      message: 'There is no such key in your account, or it is not yours to manage.',
    })
  return row
}

const options = (list: [string, string][], chosen = '') =>
  list.map(([v, label]) => html`<option value="${v}"${v === chosen ? html` selected` : ''}>${label}</option>`)

// Each key's completions this month: a capped key's units spent (its own count), another's answers recorded.
async function usedThisMonth(deps: DashboardDeps, u: SessionUser, keys: KeyListing[]) {
  const month = monthOf((deps.clock ?? Date.now)())
  const capped = keys.filter((k) => k.monthly_completions !== null).map((k) => k.prefix)
  const [answered, counted] = await Promise.all([
    usageByKey(deps.sql, u.accountId, month),
    keyUsage(deps.sql, capped, month.month),
  ])
  const used = new Map(answered.map((a) => [a.key_prefix, a.completions]))
  for (const [prefix, n] of counted) used.set(prefix, n)
  return used
}

// Use this month against the cap, the rate limit, the models, and (for owners and admins) the way to change them.
const limitsCell = (v: Viewer, k: KeyListing, used: number) => {
  const cap = k.monthly_completions
  const manage = canManage(v.role) && k.status !== 'revoked'
  const models = k.models && html`<br><small>models ${k.models.map((m) => html`<code>${m}</code> `)}</small>`
  return html`${cap === null ? html`${used} <small>(no cap)</small>` : html`${used} / ${cap}`}${
    k.rate_limit === null ? '' : html`<br><small>${k.rate_limit} a minute</small>`
  }${k.tokens_per_minute === null ? '' : html`<br><small>${k.tokens_per_minute} tokens a minute</small>`}${models ?? ''}${
    manage ? html` <a class="button secondary small" href="/dashboard/keys/${k.prefix}/limits">Limits</a>` : ''
  }${
    manage && k.origins?.length
      ? html` <a class="button secondary small" href="/dashboard/keys/${k.prefix}/form">Form${k.form ? ' (on)' : ''}</a>`
      : ''
  }`
}

function keyTable(v: Viewer, keys: KeyListing[], used: Map<string, number>): Html {
  if (!keys.length)
    return html`<div class="table-wrap">${empty(
      'No keys yet',
      html`<p>Create your first key above, then call the API with it.</p>`
    )}</div>`
  const rows = keys.map(
    (k) => html`<tr><td><strong>${k.name ?? '—'}</strong><br><code>${k.prefix}</code>${
      k.creator ? html`<br><span class="muted">by ${k.creator}</span>` : ''
    }</td>
<td>${k.scopes.map((s) => html`<code>${s}</code> `)}${
      k.origins ? html`<br><span class="muted">from ${k.origins.map((o) => html`<code>${o}</code> `)}</span>` : ''
    }</td>
<td>${day(k.created_at)}</td><td>${day(k.last_used_at)}</td><td>${day(k.expires_at)}</td>
<td>${limitsCell(v, k, used.get(k.prefix) ?? 0)}</td>
<td><span class="badge ${k.status}">${k.status === 'grace' ? 'in grace' : k.status}</span></td>
<td>${
      k.status === 'active'
        ? html`<a class="button secondary small" href="/dashboard/keys/${k.prefix}/rotate">Rotate</a>`
        : ''
    }
${
  k.status !== 'revoked'
    ? html`<form class="inline" method="post" action="/dashboard/keys/${k.prefix}/revoke">${csrfField(v)}
<button class="danger small">Revoke</button></form>`
    : ''
}</td></tr>`
  )
  return html`<div class="table-wrap scroll-x"><table class="keys"><thead><tr><th>Key</th><th>Scopes</th>
<th>Created</th><th>Last used</th><th>Expires</th><th>Completions this month</th><th>Status</th><th>Actions</th>
</tr></thead>
<tbody>${rows}</tbody></table></div>`
}

// The model aliases a key may call: all of them (those added later too), or only the ones checked among `configured`.
// The radio is the choice; a form without it leaves the key's models as they are.
export const modelsField = (configured: readonly string[], models: KeyLimits['models']) => {
  const checked = (on: boolean) => (on ? ' checked' : '')
  return html`<fieldset class="field"><legend>Models (the aliases it may call)</legend><div class="checks">
<label class="check"><input type="radio" name="models" value="all"${checked(models === null)}> All, and any added
later</label><label class="check"><input type="radio" name="models" value="some"${checked(models !== null)}> Only
these:</label>${configured.map(
    (a) => html`<label class="check"><input type="checkbox" name="model" value="${a}"${checked(!!models?.includes(a))}>
<code>${a}</code></label>`
  )}</div></fieldset>`
}

// The form's models: undefined when it does not choose, null for all, else the checked aliases among `configured`;
// none checked or an alias not configured is refused with a page naming the configured ones.
export function modelsOf(form: URLSearchParams, configured: readonly string[]): KeyLimits['models'] | undefined {
  const choice = form.get('models')
  if (choice === null) return undefined
  if (choice === 'all') return null
  const models = choice === 'some' ? parseModels(form.getAll('model'), configured) : 'pick All or Only these'
  if (typeof models === 'string') throw new ApiError({ code: 'bad_request', message: `Models: ${models}.` })
  return models
}

const createForm = (v: Viewer, aliases: readonly string[]) => html`<div class="card"><h2>Create a key</h2>
<form method="post" action="/dashboard/keys" class="row">${csrfField(v)}
<div class="field"><label for="name">Name</label><input id="name" name="name" required maxlength="100"
placeholder="production server"></div>
<div class="field"><label for="expires">Expires</label>
<select id="expires" name="expires">${options(EXPIRIES)}</select></div>
<fieldset class="field"><legend>Scopes (what the key may do)</legend>
<input type="hidden" name="scopes" value="chosen">
<div class="checks">${SCOPES.map(
  (s) => html`<label class="check"><input type="checkbox" name="scope" value="${s}" checked> <code>${s}</code></label>`
)}</div></fieldset>
<div class="field"><label for="origins">Web origins (for a key in a web page)</label>
<input id="origins" name="origins" maxlength="2000" placeholder="https://example.com">
<span class="muted">Only with <code>leads:write</code> alone: pages of these origins may post leads with the key.</span>
</div>${modelsField(aliases, null)}
<div class="field"><button>Create key</button></div></form></div>`

// The form's checked scopes. The form says it offered them (`scopes=chosen`), so that none checked is refused rather
// than read as a form without the choice, which gets every scope as `keys create` does.
function scopesOf(form: URLSearchParams) {
  if (form.get('scopes') !== 'chosen' && !form.has('scope')) return undefined
  const parsed = parseScopes(form.getAll('scope'))
  if ('scopes' in parsed) return parsed.scopes
  const unknown = parsed.unknown.length ? `There is no scope ${parsed.unknown.join(', ')}. ` : ''
  throw new ApiError({ code: 'bad_request', message: `${unknown}Pick one or more scopes of ${SCOPES.join(', ')}.` })
}

// The form's web origins (none when the field is empty), for a key whose only scope is leads:write.
function originsOf(form: URLSearchParams, scopes: Scope[] | undefined) {
  const text = (form.get('origins') ?? '').trim()
  if (!text) return undefined
  const parsed = parseOrigins(text)
  if ('error' in parsed) throw new ApiError({ code: 'bad_request', message: `Web origins: ${parsed.error}.` })
  const refused = originsRefusal(scopes ?? SCOPES)
  if (refused) throw new ApiError({ code: 'bad_request', message: `Web origins: ${refused}. Check leads:write alone.` })
  return parsed.origins
}

async function keysPage(deps: DashboardDeps, ctx: PageCtx, banner: Html | string = '') {
  const v = ctx.user
  const keys = await keysOf(deps.sql, v)
  const used = await usedThisMonth(deps, v, keys)
  const scope = canManage(v.role) ? 'Every key of your account.' : 'The keys you created.'
  return page(
    v,
    'keys',
    'API keys',
    html`<h1>API keys</h1><p class="lead">${scope} Send one as <code>Authorization: Bearer …</code>.</p>
${notice(ctx.url.searchParams.get('done'))}${banner}${createForm(v, configuredAliases(deps.config))}${keyTable(v, keys, used)}`
  )
}

export function keysPages(deps: DashboardDeps): Page[] {
  const { sql } = deps
  return [
    { method: 'GET', path: '/dashboard/keys', access: 'user', handle: (ctx) => keysPage(deps, ctx) },
    {
      method: 'POST',
      path: '/dashboard/keys',
      access: 'user',
      async handle(ctx) {
        const name = (ctx.form.get('name') ?? '').trim().slice(0, 100)
        if (!name) throw new ApiError({ code: 'bad_request', message: 'A key needs a name.' })
        const days = Number(ctx.form.get('expires') || 0)
        if (![0, 30, 90, 365].includes(days))
          throw new ApiError({ code: 'bad_request', message: 'Pick an expiry from the list.' })
        const expiresAt = days ? new Date(Date.now() + days * 86_400_000) : undefined
        const scopes = scopesOf(ctx.form)
        const origins = originsOf(ctx.form, scopes)
        const limits = { models: modelsOf(ctx.form, configuredAliases(deps.config)) }
        const u = ctx.user
        const input = { email: u.email, keyName: name, createdBy: u.userId, expiresAt, scopes, origins, limits }
        const k = await createKey(sql, input, actorOf(ctx))
        // Answered directly, not redirected: the key is never stored, so it can be shown only in this response.
        return keysPage(deps, ctx, shownOnce('new-key', `Key “${name}” created.`, k.key))
      },
    },
    {
      method: 'GET',
      path: '/dashboard/keys/:prefix/rotate',
      access: 'user',
      handle: async (ctx) => confirmRotate(ctx.user, await ownKey(sql, ctx.user, ctx.params.prefix)),
    },
    {
      method: 'POST',
      path: '/dashboard/keys/:prefix/rotate',
      access: 'user',
      async handle(ctx) {
        const old = await ownKey(sql, ctx.user, ctx.params.prefix)
        const grace = Number(ctx.form.get('grace') ?? Number.NaN)
        if (!GRACES.some(([g]) => Number(g) === grace))
          throw new ApiError({ code: 'bad_request', message: 'Pick how long the old key keeps working.' })
        const k = await rotateKey(sql, { prefix: old.prefix, graceSeconds: grace, actor: actorOf(ctx) })
        if (!k) throw new ApiError({ code: 'not_found', message: 'The key is gone.' })
        const until =
          k.oldExpiresAt > k.now
            ? `The old key works until ${when(k.oldExpiresAt)} UTC.`
            : 'The old key no longer works.'
        return keysPage(deps, ctx, shownOnce('new-key', 'Key rotated.', k.key, until))
      },
    },
    {
      method: 'POST',
      path: '/dashboard/keys/:prefix/revoke',
      access: 'user',
      async handle(ctx) {
        const k = await ownKey(sql, ctx.user, ctx.params.prefix)
        if (ctx.form.get('confirm') !== 'yes') return confirmRevoke(ctx.user, k)
        await revokeKey(sql, k.prefix, actorOf(ctx))
        return see('/dashboard/keys?done=revoked')
      },
    },
  ]
}

// The confirmation step, a page of its own so that it works without script.
const confirmRevoke = (v: Viewer, k: KeyListing) =>
  confirmStep(v, 'keys', {
    title: 'Revoke a key',
    heading: html`Revoke key <code>${k.prefix}</code>?`,
    body: html`<p>“${k.name ?? 'unnamed'}” stops working within a second, everywhere. This cannot be undone.</p>`,
    action: `/dashboard/keys/${k.prefix}/revoke`,
    button: 'Revoke the key',
    cancel: '/dashboard/keys',
  })

// Rotating asks first, on a page of its own (so without script too): how long the old key keeps working, preselected
// as `keys rotate` does.
const confirmRotate = (v: Viewer, k: KeyListing) =>
  page(
    v,
    'keys',
    'Rotate a key',
    html`<h1>Rotate key <code>${k.prefix}</code>?</h1><div class="card">
<p>“${k.name ?? 'unnamed'}” gets a new secret, shown once on the next page, with the same scopes and limits. Servers
that use the old one must be given the new one before the old one stops working.</p>
<form method="post" action="/dashboard/keys/${k.prefix}/rotate" class="row">${csrfField(v)}
<div class="field"><label for="grace">Old key keeps working for</label>
<select id="grace" name="grace">${options(GRACES, String(ROTATE_GRACE_SECONDS))}</select></div>
<div class="field"><button>Confirm rotate</button></div>
<div class="field"><a class="button secondary" href="/dashboard/keys">Cancel</a></div></form></div>`
  )
