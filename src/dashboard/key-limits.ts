import type { KeyListing } from '../accounts/key-lifecycle.js'
import { type KeyLimits, LIMIT_MIN, parseLimit, setKeyLimits } from '../accounts/key-limits.js'
import { ApiError } from '../http/errors.js'
import { keyBudget } from '../accounts/key-budget.js'
import { parseUsd } from '../accounts/budget-set.js'
import { usd } from '../ops/usd.js'
import { html } from './html.js'
import { configuredAliases } from '../ops/model-aliases.js'
import { modelsField, modelsOf, ownKey } from './key-pages.js'
import { csrfField, page, type Viewer } from './layout.js'
import { actorOf, see, type DashboardDeps, type Page } from './page.js'

// A key's own limits on the dashboard (owners and admins): a page of the key's own with a plain form (no script), the
// same function as `studio keys limit`. An empty field is no limit of the key's own: the account's applies; the
// models are all of them, or the ones checked.

const FIELDS = [
  { field: 'rate_limit', name: 'rateLimit', label: 'Rate limit (requests in any minute)' },
  { field: 'monthly_completions', name: 'monthlyCompletions', label: 'Monthly completions cap' },
  { field: 'tokens_per_minute', name: 'tokensPerMinute', label: 'Tokens per minute (input plus output)' },
] as const

// The form's limits; a value that is neither empty, `none` nor a whole number in range is refused with a page, as
// models not configured.
function limitsOf(form: URLSearchParams, configured: readonly string[]): Partial<KeyLimits> {
  const limits: Partial<KeyLimits> = { rateLimit: null, monthlyCompletions: null, tokensPerMinute: null }
  for (const { field, name, label } of FIELDS) {
    const text = (form.get(field) ?? '').trim()
    const n = text === '' ? null : parseLimit(text, LIMIT_MIN[name])
    if (n === undefined)
      throw new ApiError({
        code: 'bad_request',
        message: `${label}: a whole number of at least ${LIMIT_MIN[name]}, or empty for none.`,
      })
    limits[name] = n
  }
  const models = modelsOf(form, configured)
  return models === undefined ? limits : { ...limits, models }
}

// The form's monthly budget in micro-dollars (empty: none); undefined when the form has no such field.
function budgetOf(form: URLSearchParams): number | null | undefined {
  const text = form.get('budget')?.trim()
  if (text === undefined) return undefined
  if (text === '' || text.toLowerCase() === 'none') return null
  const micros = parseUsd(text)
  if (micros === null)
    throw new ApiError({ code: 'bad_request', message: 'Monthly budget: an amount in USD (5.00), or empty for none.' })
  return micros
}

const limitsForm = (v: Viewer, k: KeyListing, configured: readonly string[], budget: number | null) =>
  page(
    v,
    'keys',
    'Key limits',
    html`<h1>Limits of key <code>${k.prefix}</code></h1><div class="card">
<p>“${k.name ?? 'unnamed'}” gets the lower of these and your account's own (the service's rate limit, your plan's
quota). Leave a field empty for none of the key's own. Servers apply a change within a second. Calls that do not fit
the monthly budget (in USD, this key and the keys it replaced) are refused.</p>
<form method="post" action="/dashboard/keys/${k.prefix}/limits" class="row">${csrfField(v)}
${FIELDS.map(
  ({ field, label }) => html`<div class="field"><label for="${field}">${label}</label>
<input id="${field}" name="${field}" inputmode="numeric" value="${k[field] ?? ''}" placeholder="none"></div>`
)}<div class="field"><label for="budget">Monthly budget (USD)</label>
<input id="budget" name="budget" inputmode="decimal" value="${budget === null ? '' : usd(budget)}" placeholder="none">
</div>${modelsField(configured, k.models)}<div class="field"><button>Save limits</button></div>
<a class="button secondary" href="/dashboard/keys">Cancel</a></form></div>`
  )

export function keyLimitPages(deps: DashboardDeps): Page[] {
  const path = '/dashboard/keys/:prefix/limits'
  return [
    {
      method: 'GET',
      path,
      access: 'admin',
      async handle(ctx) {
        const k = await ownKey(deps.sql, ctx.user, ctx.params.prefix)
        return limitsForm(ctx.user, k, configuredAliases(deps.config), await keyBudget(deps.sql, k.prefix))
      },
    },
    {
      method: 'POST',
      path,
      access: 'admin',
      async handle(ctx) {
        const limits = limitsOf(ctx.form, configuredAliases(deps.config))
        const budget = budgetOf(ctx.form)
        // Limited to the account's keys: another account's prefix is not found, as an unknown one.
        // The limits and the budget in one transaction: saved together, or (a failure) neither.
        const mine = { prefix: ctx.params.prefix, accountId: ctx.user.accountId, actor: actorOf(ctx) }
        const r = await setKeyLimits(deps.sql, { ...mine, change: limits, budget })
        if (!r.ok) throw new ApiError({ code: 'not_found', message: 'There is no such key in your account.' })
        return see('/dashboard/keys?done=limited')
      },
    },
  ]
}
