import { is } from 'valibot'
import { createSigninLink, newSigninLink } from '../accounts/signin-links.js'
import { inviteMember, listMembers, removeMember, setMemberRole, TeamError } from '../accounts/team.js'
import { Email, ROLES } from '../api/schemas.js'
import { ApiError } from '../http/errors.js'
import { html, type Html } from './html.js'
import { linkMail } from './mail.js'
import { csrfField, notice, page, secretBox, when, type Viewer } from './layout.js'
import { actorOf, see, type DashboardDeps, type Page, type PageCtx } from './page.js'

const roleOptions = (current: string) =>
  ROLES.map((r) => html`<option value="${r}"${r === current ? html` selected` : ''}>${r}</option>`)

function roleOf(value: string | null): string {
  if (!(ROLES as readonly string[]).includes(value ?? ''))
    throw new ApiError({ code: 'bad_request', message: 'Pick a role from the list.' })
  return value as string
}

async function teamPage(deps: DashboardDeps, ctx: PageCtx, banner: Html | string = '') {
  const v: Viewer = ctx.user
  const members = await listMembers(deps.sql, ctx.user.accountId)
  const rows = members.map(
    (m) => html`<tr><td>${m.name ?? '—'}</td><td>${m.email}</td><td>
<form class="inline" method="post" action="/dashboard/team/${m.id}/role">${csrfField(v)}
<label class="skip" for="r-${m.id}">Role of ${m.email}</label>
<select id="r-${m.id}" name="role">${roleOptions(m.role)}</select>
<button class="secondary small">Change</button></form></td>
<td>${m.has_password ? 'yes' : 'not yet'}</td><td>${when(m.created_at)}</td><td>
<form class="inline" method="post" action="/dashboard/team/${m.id}/link">${csrfField(v)}
<button class="secondary small">Sign-in link</button></form>
${
  m.id === ctx.user.userId
    ? ''
    : html`<form class="inline" method="post" action="/dashboard/team/${m.id}/remove">${csrfField(v)}
<button class="danger small">Remove</button></form>`
}</td></tr>`
  )
  return page(
    v,
    'team',
    'Team',
    html`<h1>Team</h1><p class="lead">Who can sign in to this account. Owners and admins manage every key and this page;
members see only their own keys.</p>${notice(ctx.url.searchParams.get('done'))}${banner}
<div class="card"><h2>Invite someone</h2><form method="post" action="/dashboard/team" class="row">${csrfField(v)}
<div class="field"><label for="email">Email</label><input id="email" name="email" type="email" required></div>
<div class="field"><label for="role">Role</label><select id="role" name="role">${roleOptions('member')}</select></div>
<div class="field"><button>Create sign-in link</button></div></form></div>
<div class="table-wrap scroll-x"><table><thead><tr><th>Name</th><th>Email</th><th>Role</th><th>Password set</th><th>Added</th>
<th>Actions</th></tr></thead><tbody>${rows}</tbody></table></div>`
  )
}

const linkBanner = (email: string, link: string, mailed: boolean) => html`<div class="notice warn" role="alert">
<strong>A sign-in link for ${email}</strong>: ${mailed ? 'it is on its way to them by email; or ' : ''}hand it over
privately. It works once, for 24 hours.
${secretBox('new-link', link)}</div>`

// TeamError (last owner, foreign email, unknown user) is the user's mistake: a 400 page, nothing changed.
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (e) {
    if (e instanceof TeamError) throw new ApiError({ code: 'bad_request', message: e.message })
    throw e
  }
}

// The account's user `id`, when the viewer may manage them: an admin can neither sign in as, demote nor remove an owner
// (a sign-in link for an owner would make an admin one).
async function managed(deps: DashboardDeps, ctx: PageCtx, id: string) {
  const member = (await listMembers(deps.sql, ctx.user.accountId)).find((m) => m.id === id)
  if (!member) throw new ApiError({ code: 'not_found', message: 'There is no such user in your account.' })
  if (member.role === 'owner' && ctx.user.role !== 'owner')
    throw new ApiError({ code: 'forbidden', message: 'Only an owner can manage an owner.' })
  return member
}

// A new sign-in link for the user, shown on the page and, with mail on, mailed to them (as an invitation when they
// were just invited).
const signinFor = async (deps: DashboardDeps, ctx: PageCtx, id: string, invited = false) => {
  const member = await managed(deps, ctx, id)
  const link = newSigninLink(deps.publicUrl())
  const invitation = invited ? { by: ctx.user.name ?? ctx.user.email, role: member.role } : undefined
  const mail = linkMail(deps, link.url, invitation)
  const made = await createSigninLink(deps.sql, { userId: member.id, link, mail, actor: actorOf(ctx) })
  return teamPage(deps, ctx, linkBanner(member.email, made.url, made.mailed))
}

export function teamPages(deps: DashboardDeps): Page[] {
  const { sql } = deps
  const post = (path: string, handle: Page['handle']): Page => ({ method: 'POST', path, access: 'admin', handle })
  return [
    { method: 'GET', path: '/dashboard/team', access: 'admin', handle: (ctx) => teamPage(deps, ctx) },
    post('/dashboard/team', async (ctx) => {
      const email = (ctx.form.get('email') ?? '').trim()
      if (!is(Email, email)) throw new ApiError({ code: 'bad_request', message: 'That is not an email address.' })
      const role = roleOf(ctx.form.get('role'))
      if (role === 'owner' && ctx.user.role !== 'owner')
        throw new ApiError({ code: 'forbidden', message: 'Only an owner can add owners.' })
      return signinFor(
        deps,
        ctx,
        await guarded(() => inviteMember(sql, ctx.user.accountId, email, role, actorOf(ctx))),
        true
      )
    }),
    post('/dashboard/team/:id/link', (ctx) => signinFor(deps, ctx, ctx.params.id)),
    post('/dashboard/team/:id/role', async (ctx) => {
      const role = roleOf(ctx.form.get('role'))
      if (role === 'owner' && ctx.user.role !== 'owner')
        throw new ApiError({ code: 'forbidden', message: 'Only an owner can add owners.' })
      await managed(deps, ctx, ctx.params.id)
      await guarded(() => setMemberRole(sql, ctx.user.accountId, ctx.params.id, role, actorOf(ctx)))
      return see('/dashboard/team?done=role')
    }),
    post('/dashboard/team/:id/remove', async (ctx) => {
      await managed(deps, ctx, ctx.params.id)
      await guarded(() => removeMember(sql, ctx.user.accountId, ctx.params.id, actorOf(ctx)))
      return see('/dashboard/team?done=removed')
    }),
  ]
}
