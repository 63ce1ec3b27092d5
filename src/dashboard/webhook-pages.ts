import { listDeliveryLog } from '../events/delivery-log.js'
import { mailLog } from '../events/mail-deliveries.js'
import {
  addEndpoint,
  disableEndpoint,
  type Endpoint,
  enableEndpoint,
  findEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
} from '../events/endpoints.js'
import { resend, sendTest } from '../events/manual.js'
import { ApiError } from '../http/errors.js'
import { mailIsOn } from '../ops/config.js'
import { html, type Html } from './html.js'
import { confirmStep, errorBanner, notice, page, shownOnce, when } from './layout.js'
import { mailLogCard } from './mail-log.js'
import { actorOf, see, type DashboardDeps, type Page, type PageCtx } from './page.js'
import { type AddValues, addForm, deliveryLog, endpointCard, endpointsTable, NO_VALUES } from './webhook-views.js'

// The Webhooks section (owners and admins): an account's endpoints, each with its actions and delivery log. Every
// change goes through src/events/, as the CLI's does.

async function listPage(deps: DashboardDeps, ctx: PageCtx, banner: Html | string = '', values = NO_VALUES) {
  const v = ctx.user
  const endpoints = await listEndpoints(deps.sql, v.accountId)
  const mails = mailLogCard(await mailLog(deps.sql, v.accountId), mailIsOn(deps.config))
  return page(
    v,
    'webhooks',
    'Webhooks',
    html`<h1>Webhooks</h1><p class="lead">This account's events, POSTed as they happen to the endpoints below, signed
the <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> way with each endpoint's secret.</p>
${notice(ctx.url.searchParams.get('done'))}${banner}${addForm(v, values)}${endpointsTable(endpoints)}${mails}`
  )
}

async function endpointOf(deps: DashboardDeps, ctx: PageCtx): Promise<Endpoint> {
  const found = await findEndpoint(deps.sql, ctx.user.accountId, ctx.params.id)
  if (!found) throw new ApiError({ code: 'not_found', message: 'There is no such endpoint in your account.' })
  return found
}

async function endpointPage(deps: DashboardDeps, ctx: PageCtx, e: Endpoint, banner: Html | string = '') {
  const v = ctx.user
  const before = ctx.url.searchParams.get('before') ?? undefined
  const log = await listDeliveryLog(deps.sql, e.id, before)
  return page(
    v,
    'webhooks',
    'Webhook endpoint',
    html`<p><a href="/dashboard/webhooks">← Webhooks</a></p><h1>Endpoint</h1>
${notice(ctx.url.searchParams.get('done'))}${banner}${endpointCard(v, e)}
<h2>Delivery log</h2><p class="lead">Every attempt of the last 30 days, newest event first. Resend sends an event
again with the same <code>webhook-id</code>.</p>${deliveryLog(v, e.id, log, !before)}`
  )
}

// The add form as sent; the events are checked by src/events/ (unknown types are refused there).
function addValues(form: URLSearchParams): AddValues {
  const events = form.get('scope') === 'some' ? form.getAll('events') : null
  const text = (name: string) => (form.get(name) ?? '').trim()
  return { kind: text('kind'), url: text('url'), description: text('description'), events }
}

async function add(deps: DashboardDeps, ctx: PageCtx) {
  const values = addValues(ctx.form)
  const input = {
    accountId: ctx.user.accountId,
    url: values.url,
    kind: values.kind || undefined,
    events: values.events ?? undefined,
    description: values.description || undefined,
  }
  try {
    if (values.events?.length === 0)
      throw new ApiError({ code: 'invalid_request', message: 'pick at least one event type, or all' })
    const made = await addEndpoint(deps.sql, input, deps.config.STUDIO_WEBHOOKS_ALLOW_PRIVATE, actorOf(ctx))
    // Answered directly, not redirected: this response is the only place the secret is ever shown.
    const shown = shownOnce('new-secret', 'Endpoint added. Its signing secret:', made.secret)
    return listPage(deps, ctx, shown)
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 'invalid_request') throw e
    const shown = errorBanner(`The endpoint was not added: ${e.message}.`)
    return { status: 422, page: await listPage(deps, ctx, shown, values) }
  }
}

const done = (e: Endpoint, word: string) => see(`/dashboard/webhooks/${e.id}?done=${word}`)

export function webhooksPages(deps: DashboardDeps): Page[] {
  const { sql } = deps
  const now = () => new Date(deps.clock?.() ?? Date.now())
  const post = (action: string, handle: (ctx: PageCtx, e: Endpoint) => ReturnType<Page['handle']>): Page => ({
    method: 'POST',
    path: `/dashboard/webhooks/:id/${action}`,
    access: 'admin',
    handle: async (ctx) => handle(ctx, await endpointOf(deps, ctx)),
  })
  const enabled = (e: Endpoint, what: string) => {
    if (e.disabledReason !== null)
      throw new ApiError({ code: 'bad_request', message: `The endpoint is disabled: enable it to ${what}.` })
  }
  // Refused in SQL after the endpoint was read: it may have been disabled or removed meanwhile, which is then said.
  const refused = async (ctx: PageCtx, what: string) => enabled(await endpointOf(deps, ctx), what)
  return [
    { method: 'GET', path: '/dashboard/webhooks', access: 'admin', handle: (ctx) => listPage(deps, ctx) },
    { method: 'POST', path: '/dashboard/webhooks', access: 'admin', handle: (ctx) => add(deps, ctx) },
    {
      method: 'GET',
      path: '/dashboard/webhooks/:id',
      access: 'admin',
      handle: async (ctx) => endpointPage(deps, ctx, await endpointOf(deps, ctx)),
    },
    post('test', async (ctx, e) => {
      enabled(e, 'send it a test event')
      if (!(await sendTest(sql, ctx.user.accountId, e.id, ctx.user.email, now()))) {
        await refused(ctx, 'send it a test event')
        throw new ApiError({ code: 'bad_request', message: 'The test event was not sent: try again.' })
      }
      return done(e, 'webhook-test')
    }),
    post('resend', async (ctx, e) => {
      enabled(e, 'send it events')
      if (!(await resend(sql, e.id, ctx.form.get('event') ?? '', now()))) {
        await refused(ctx, 'send it events')
        throw new ApiError({
          code: 'not_found',
          message: 'This endpoint was never sent that event, or it is older than 30 days.',
        })
      }
      return done(e, 'webhook-resent')
    }),
    post('rotate', async (ctx, e) => {
      const rotated = await rotateSecret(sql, e.id, now(), actorOf(ctx))
      if (!rotated) throw new ApiError({ code: 'not_found', message: 'The endpoint is gone.' })
      const until = `The old secret keeps signing until ${when(rotated.until)} UTC.`
      return endpointPage(deps, ctx, e, shownOnce('new-secret', 'Secret rotated.', rotated.secret, until))
    }),
    post('disable', async (ctx, e) => {
      await disableEndpoint(sql, e.id, `disabled by hand by ${ctx.user.email}`, actorOf(ctx))
      return done(e, 'webhook-disabled')
    }),
    post('enable', async (ctx, e) => {
      await enableEndpoint(sql, e.id, actorOf(ctx))
      return done(e, 'webhook-enabled')
    }),
    post('delete', async (ctx, e) => {
      if (ctx.form.get('confirm') !== 'yes') return confirmDelete(ctx, e)
      await removeEndpoint(sql, e.id, actorOf(ctx))
      return see('/dashboard/webhooks?done=webhook-deleted')
    }),
  ]
}

// The confirmation step, a page of its own so that it works without script.
const confirmDelete = (ctx: PageCtx, e: Endpoint) =>
  confirmStep(ctx.user, 'webhooks', {
    title: 'Delete an endpoint',
    heading: 'Delete this endpoint?',
    body: html`<p><code>${e.url}</code> receives nothing more; its pending deliveries and its delivery log are deleted.
This cannot be undone.</p>`,
    action: `/dashboard/webhooks/${e.id}/delete`,
    button: 'Delete the endpoint',
    cancel: `/dashboard/webhooks/${e.id}`,
  })
