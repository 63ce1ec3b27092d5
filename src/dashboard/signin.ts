import { hashPassword, MIN_PASSWORD, passwordProblem } from '../accounts/passwords.js'
import { createSession, endSession } from '../accounts/sessions.js'
import { createSigninLink, linkIsValid, newSigninLink, redeemLink } from '../accounts/signin-links.js'
import { signinFailed, userByEmail, userByPassword } from '../accounts/users.js'
import type { SlidingWindow } from '../limits/limits.js'
import { clientAddress } from '../http/client-address.js'
import { ApiError } from '../http/errors.js'
import { mailIsOn } from '../ops/config.js'
import type { Sql } from '../storage/db.js'
import { html, type Html } from './html.js'
import { bare, errorBanner, notice } from './layout.js'
import { linkMail } from './mail.js'
import { actorOf, addressOf, see, type DashboardDeps, type Page, type PageCtx } from './page.js'

const MAX_AGE = 30 * 24 * 3600

const secure = (deps: DashboardDeps) => deps.publicUrl().startsWith('https:')
export const cookieName = (deps: DashboardDeps) => (secure(deps) ? '__Host-studio_session' : 'studio_session')

function setCookie(deps: DashboardDeps, ctx: PageCtx, value: string, maxAge: number) {
  const flags = `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure(deps) ? '; Secure' : ''}`
  ctx.headers.push('set-cookie', `${cookieName(deps)}=${value}; ${flags}`)
}

async function signIn(deps: DashboardDeps, ctx: PageCtx, userId: string) {
  setCookie(deps, ctx, await createSession(deps.sql, userId, addressOf(ctx)), MAX_AGE)
  return see('/dashboard/keys')
}

// With mail on, anyone can ask for a sign-in link by email: the page never shows it, and says the same whether or not
// the address has an account.
const linkForm = html`<form method="post" action="/dashboard/signin/link">
<div class="field"><label for="link-email">Email for a sign-in link</label>
<input id="link-email" name="email" type="email" autocomplete="username" required></div>
<button class="secondary">Email me a link</button></form>`

const signinForm = (mail: boolean, message?: string, email = '', done: string | null = null) =>
  bare(
    'Sign in',
    html`<div class="card"><h1>Sign in</h1><p class="lead">to your Studio dashboard</p>${notice(done)}
${message ? errorBanner(message) : ''}
<form method="post" action="/dashboard/signin">
<div class="field"><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${email}"></div>
<div class="field"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required></div>
<button>Sign in</button></form>
${
  mail
    ? html`<p class="lead">No password yet, or forgot it? Get a sign-in link by email.</p>${linkForm}</div>`
    : html`<p class="lead">No password yet, or forgot it? Ask an owner of your account for a sign-in link, or run
<code>studio signin-link --email you@example.com</code>.</p></div>`
}`
  )

const passwordForm = (path: string, email: string, message?: string): Html =>
  bare(
    'Choose a password',
    html`<div class="card"><h1>Choose a password</h1><p class="lead">for ${email}</p>
${message ? errorBanner(message) : ''}
<form method="post" action="${path}">
<input type="text" name="username" autocomplete="username" value="${email}" hidden>
<div class="field"><label for="password">New password (at least ${MIN_PASSWORD} characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD}"
required></div>
<div class="field"><label for="confirm">Repeat it</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required></div>
<button>Save and sign in</button></form></div>`
  )

async function validLink(sql: Sql, ctx: PageCtx) {
  const link = await linkIsValid(sql, ctx.params.token)
  if (!link)
    throw new ApiError({
      code: 'not_found',
      message: 'This sign-in link was used already, has expired, or never existed.',
    })
  return link
}

export function signinPages(deps: DashboardDeps, attempts: { address: SlidingWindow; email: SlidingWindow }): Page[] {
  const tooMany = () =>
    new ApiError({ code: 'rate_limited', message: 'Too many sign-in attempts; wait a few minutes and try again.' })
  const mail = mailIsOn(deps.config)
  const limit = (ctx: PageCtx, email: string) => {
    if (!attempts.address.hit(clientAddress(ctx.req)).ok) throw tooMany()
    if (!attempts.email.hit(email.toLowerCase()).ok) throw tooMany()
  }
  return [
    {
      method: 'GET',
      path: '/dashboard/signin',
      access: 'public',
      handle: (ctx) => signinForm(mail, undefined, '', ctx.url.searchParams.get('done')),
    },
    {
      method: 'POST',
      path: '/dashboard/signin/link',
      access: 'public',
      async handle(ctx) {
        if (!mail)
          throw new ApiError({
            code: 'not_found',
            message: 'This server sends no mail: ask an owner for a sign-in link.',
          })
        const email = (ctx.form.get('email') ?? '').trim().slice(0, 320)
        limit(ctx, email)
        const userId = await userByEmail(deps.sql, email)
        const actor = { kind: 'user', email, address: addressOf(ctx) } as const
        if (userId) {
          const link = newSigninLink(deps.publicUrl())
          await createSigninLink(deps.sql, { userId, link, mail: linkMail(deps, link.url), actor })
        }
        return see('/dashboard/signin?done=link-sent')
      },
    },
    {
      method: 'POST',
      path: '/dashboard/signin',
      access: 'public',
      async handle(ctx) {
        const email = (ctx.form.get('email') ?? '').trim().slice(0, 320)
        const password = ctx.form.get('password') ?? ''
        limit(ctx, email)
        const userId = await userByPassword(deps.sql, email, password)
        if (!userId) await signinFailed(deps.sql, email, addressOf(ctx))
        if (!userId) return { status: 401, page: signinForm(mail, 'That email and password do not match.', email) }
        return signIn(deps, ctx, userId)
      },
    },
    {
      method: 'GET',
      path: '/dashboard/link/:token',
      access: 'public',
      async handle(ctx) {
        return passwordForm(ctx.url.pathname, (await validLink(deps.sql, ctx)).email)
      },
    },
    {
      method: 'POST',
      path: '/dashboard/link/:token',
      access: 'public',
      async handle(ctx) {
        const link = await validLink(deps.sql, ctx)
        const password = ctx.form.get('password') ?? ''
        const problem = passwordProblem(password, ctx.form.get('confirm'))
        if (problem) return { status: 422, page: passwordForm(ctx.url.pathname, link.email, problem) }
        const userId = await redeemLink(deps.sql, ctx.params.token, await hashPassword(password), addressOf(ctx))
        if (!userId) throw new ApiError({ code: 'not_found', message: 'This sign-in link was used already.' })
        return signIn(deps, ctx, userId)
      },
    },
    {
      method: 'POST',
      path: '/dashboard/signout',
      access: 'user',
      async handle(ctx) {
        if (ctx.token) await endSession(deps.sql, ctx.token, actorOf(ctx), ctx.user.accountId)
        setCookie(deps, ctx, '', 0)
        return see('/dashboard/signin')
      },
    },
  ]
}
