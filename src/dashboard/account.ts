import { accountPlan } from '../accounts/key-lifecycle.js'
import { accountBudget, parseUsd, setAccountBudget } from '../accounts/budget-set.js'
import { usd } from '../ops/usd.js'
import { assignedMailChoice, leadMailChoice, setAssignedMailChoice, setLeadMailChoice } from '../accounts/lead-mail.js'
import { passwordProblem } from '../accounts/passwords.js'
import { endOtherSessions } from '../accounts/sessions.js'
import { passwordMatches, setPassword } from '../accounts/users.js'
import { ApiError } from '../http/errors.js'
import { mailIsOn } from '../ops/config.js'
import { retentionCard } from './account-retention.js'
import { html } from './html.js'
import { csrfField, errorBanner, notice, page } from './layout.js'
import { actorOf, see, type DashboardDeps, type Page, type PageCtx } from './page.js'

// The user's choice of a mail per new lead (saved even while the server sends no mail).
async function emailCard(deps: DashboardDeps, ctx: PageCtx) {
  const on = await leadMailChoice(deps.sql, ctx.user.userId)
  return html`<div class="card"><h2>Email</h2>
${
  mailIsOn(deps.config)
    ? ''
    : html`<p class="lead">This server sends no mail yet: its operator has not set
<code>STUDIO_SMTP_URL</code>.</p>`
}
<form method="post" action="/dashboard/account/lead-mail">${csrfField(ctx.user)}
<div class="field check"><input id="lead-mail" name="lead_mail" type="checkbox" value="on"${on ? html` checked` : ''}>
<label for="lead-mail">Email me each new lead</label></div>
<button class="secondary">Save</button></form></div>`
}

// The account's monthly budget: owners set or lift it (the same function as `studio budget set`); others see it.
async function budgetCard(deps: DashboardDeps, ctx: PageCtx) {
  const micros = await accountBudget(deps.sql, ctx.user.accountId)
  const shown = micros === null ? '' : usd(micros)
  if (ctx.user.role !== 'owner')
    return html`<div class="card"><h2>Monthly budget</h2>
<p>${micros === null ? 'No budget is set.' : html`${shown} USD a month.`} Owners set it.</p></div>`
  return html`<div class="card"><h2>Monthly budget</h2>
<p class="lead">Calls that do not fit what is left of it this month are refused. Leave it empty for none.</p>
<form method="post" action="/dashboard/account/budget" class="row">${csrfField(ctx.user)}
<div class="field"><label for="budget">Monthly budget (USD)</label>
<input id="budget" name="budget" inputmode="decimal" value="${shown}" placeholder="none"></div>
<div class="field"><button>Save budget</button></div></form></div>`
}

// The user's choice of a mail when a lead is assigned to them (on until they turn it off).
async function assignedMailCard(deps: DashboardDeps, ctx: PageCtx) {
  const on = await assignedMailChoice(deps.sql, ctx.user.userId)
  return html`<div class="card"><h2>Assigned leads</h2>
<form method="post" action="/dashboard/account/assigned-mail">${csrfField(ctx.user)}
<div class="field check"><input id="assigned-mail" name="assigned_mail" type="checkbox" value="on"${on ? html` checked` : ''}>
<label for="assigned-mail">Mail me when a lead is assigned to me</label></div>
<button class="secondary">Save</button></form></div>`
}

async function accountPage(deps: DashboardDeps, ctx: PageCtx, problem?: string) {
  const v = ctx.user
  const plan = await accountPlan(deps.sql, v.accountId)
  return page(
    v,
    'account',
    'Account',
    html`<h1>Account</h1><p class="lead">${v.email}</p>${notice(ctx.url.searchParams.get('done'))}
<div class="card"><h2>Plan</h2><p><span class="badge active">${plan}</span></p>
<p class="lead">Plans are set by the operator of this service (<code>studio plan set</code>).</p></div>
${await budgetCard(deps, ctx)}
${await emailCard(deps, ctx)}
${await assignedMailCard(deps, ctx)}
${await retentionCard(deps, ctx)}
<div class="card"><h2>Change password</h2>
${problem ? errorBanner(problem) : ''}
<form method="post" action="/dashboard/account/password">${csrfField(v)}
<input type="text" name="username" autocomplete="username" value="${v.email}" hidden>
<div class="field"><label for="current">Current password</label>
<input id="current" name="current" type="password" autocomplete="current-password" required></div>
<div class="field"><label for="password">New password (at least 12 characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required></div>
<div class="field"><label for="confirm">Repeat it</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required></div>
<button>Change password</button></form></div>
<div class="card"><h2>Sessions</h2><p>Sign out of every other browser where you are signed in.</p>
<form method="post" action="/dashboard/account/signout-everywhere">${csrfField(v)}
<button class="secondary">Sign out everywhere else</button></form></div>`
  )
}

export function accountPages(deps: DashboardDeps): Page[] {
  const { sql } = deps
  return [
    { method: 'GET', path: '/dashboard/account', access: 'user', handle: (ctx) => accountPage(deps, ctx) },
    {
      method: 'POST',
      path: '/dashboard/account/password',
      access: 'user',
      async handle(ctx) {
        if (!(await passwordMatches(sql, ctx.user.userId, ctx.form.get('current') ?? '')))
          return { status: 422, page: await accountPage(deps, ctx, 'The current password is not right.') }
        const password = ctx.form.get('password') ?? ''
        const problem = passwordProblem(password, ctx.form.get('confirm'))
        if (problem) return { status: 422, page: await accountPage(deps, ctx, problem) }
        await setPassword(sql, ctx.user.userId, password, actorOf(ctx))
        await endOtherSessions(sql, ctx.user.userId, ctx.token)
        return see('/dashboard/account?done=password')
      },
    },
    {
      method: 'POST',
      path: '/dashboard/account/budget',
      access: 'user',
      async handle(ctx) {
        if (ctx.user.role !== 'owner')
          throw new ApiError({ code: 'forbidden', message: "Only the account's owners set its budget." })
        const text = (ctx.form.get('budget') ?? '').trim()
        const micros = text === '' || text.toLowerCase() === 'none' ? null : parseUsd(text)
        if (micros === null && text !== '' && text.toLowerCase() !== 'none')
          throw new ApiError({
            code: 'bad_request',
            message: 'Monthly budget: an amount in USD (25.00), or empty for none.',
          })
        await setAccountBudget(sql, ctx.user.accountId, micros, actorOf(ctx))
        return see('/dashboard/account?done=budget')
      },
    },
    {
      method: 'POST',
      path: '/dashboard/account/lead-mail',
      access: 'user',
      async handle(ctx) {
        await setLeadMailChoice(sql, ctx.user.userId, ctx.form.get('lead_mail') === 'on')
        return see('/dashboard/account?done=lead-mail')
      },
    },
    {
      method: 'POST',
      path: '/dashboard/account/assigned-mail',
      access: 'user',
      async handle(ctx) {
        await setAssignedMailChoice(sql, ctx.user.userId, ctx.form.get('assigned_mail') === 'on')
        return see('/dashboard/account?done=assigned-mail')
      },
    },
    {
      method: 'POST',
      path: '/dashboard/account/signout-everywhere',
      access: 'user',
      async handle(ctx) {
        if (!ctx.token) throw new ApiError({ code: 'forbidden', message: 'No session.' })
        await endOtherSessions(sql, ctx.user.userId, ctx.token, actorOf(ctx))
        return see('/dashboard/account?done=everywhere')
      },
    },
  ]
}
