import { SUBSCRIBABLE_TYPES } from '../outbox/catalogue.js'
import type { LoggedEvent, LogPage } from '../events/delivery-log.js'
import { unansweredAs } from '../events/address.js'
import { ENDPOINT_KINDS, kindLabel } from '../events/endpoint-input.js'
import type { Endpoint } from '../events/endpoints.js'
import { html, type Html } from './html.js'
import { csrfField, empty, when, type Viewer } from './layout.js'

// The Webhooks section's markup: the add form, the endpoints table, one endpoint's actions and its delivery log.

export interface AddValues {
  kind: string
  url: string
  description: string
  // null: every type, those added later included.
  events: string[] | null
}

export const NO_VALUES: AddValues = { kind: 'standard', url: '', description: '', events: null }

const checked = (on: boolean) => (on ? html` checked` : '')

const eventsOf = (e: Endpoint) =>
  (e.events ? e.events.join(', ') : 'all') + (e.kind === 'standard' ? '' : ` (${kindLabel(e.kind)})`)

const stateOf = (e: Endpoint) =>
  e.disabledReason === null
    ? html`<span class="badge active">enabled</span>`
    : html`<span class="badge revoked">disabled</span> <span class="muted">${e.disabledReason}</span>`

const lastOf = (e: Endpoint) =>
  e.lastAttemptAt
    ? html`${statusBadge(e.lastStatus, e.lastAnswer)} ${when(e.lastAttemptAt)}`
    : html`<span class="muted">none yet</span>`

const statusBadge = (status: number | null, answer: string | null) =>
  status === null
    ? html`<span class="badge revoked">${unansweredAs(answer)}</span>`
    : html`<span class="badge ${status >= 200 && status < 300 ? 'active' : 'failed'}">${status}</span>`

// The kind selector and the fields every kind has (a Slack endpoint takes lead.created only: src/events/ says so when
// another type is picked).
const endpointFields = (values: AddValues) => {
  const kinds = ENDPOINT_KINDS.map(
    (k) => html`<option value="${k}"${values.kind === k ? html` selected` : ''}>${kindLabel(k)}</option>`
  )
  const boxes = SUBSCRIBABLE_TYPES.map(
    (t) =>
      html`<label class="check"><input type="checkbox" name="events" value="${t}"${checked(
        values.events?.includes(t) ?? false
      )}> <code>${t}</code></label>`
  )
  return html`<div class="field"><label for="kind">Kind</label><select id="kind" name="kind">${kinds}</select>
<p class="muted">${kindLabel('standard')}: the event as signed JSON. ${kindLabel('slack')}: an incoming webhook, sent
each lead as a message.</p></div>
<div class="field"><label for="url">Endpoint URL</label>
<input id="url" name="url" type="url" required maxlength="2048" placeholder="https://example.com/webhooks/studio"
value="${values.url}"></div>
<fieldset class="field"><legend>Events to send</legend>
<label class="check"><input type="radio" name="scope" value="all"${checked(values.events === null)}> All events,
including types added later</label>
<label class="check"><input type="radio" name="scope" value="some"${checked(values.events !== null)}>
Only these:</label>
<div class="checks">${boxes}</div></fieldset>
<div class="field"><label for="description">Description (optional)</label>
<input id="description" name="description" maxlength="500" placeholder="CRM sync" value="${values.description}"></div>`
}

export const addForm = (v: Viewer, values: AddValues) => html`<div class="card"><h2>Add an endpoint</h2>
<form method="post" action="/dashboard/webhooks">${csrfField(v)}
${endpointFields(values)}
<button>Add endpoint</button></form></div>`

export function endpointsTable(endpoints: Endpoint[]): Html {
  if (!endpoints.length)
    return html`<div class="table-wrap">${empty(
      'No endpoints yet',
      html`<p>Add one above: every event of this account is then POSTed to it, signed.</p>`
    )}</div>`
  const rows = endpoints.map(
    (e) => html`<tr><td><a href="/dashboard/webhooks/${e.id}"><code>${e.url}</code></a>
${e.description ? html`<div class="muted">${e.description}</div>` : ''}</td><td>${eventsOf(e)}</td>
<td>${stateOf(e)}</td><td>${lastOf(e)}</td><td>${when(e.createdAt)}</td></tr>`
  )
  return html`<div class="table-wrap scroll-x"><table><thead><tr><th>URL</th><th>Events</th><th>State</th>
<th>Last delivery</th><th>Added</th></tr></thead><tbody>${rows}</tbody></table></div>`
}

const button = (v: Viewer, e: Endpoint, action: string, label: string, kind = 'secondary') => html`<form
class="inline" method="post" action="/dashboard/webhooks/${e.id}/${action}">${csrfField(v)}
<button class="${kind}">${label}</button></form>`

export function endpointCard(v: Viewer, e: Endpoint): Html {
  const enabled = e.disabledReason === null
  return html`<div class="card"><dl class="fields"><dt>URL</dt><dd><code>${e.url}</code></dd>
<dt>Description</dt><dd>${e.description ?? '—'}</dd><dt>Events</dt><dd>${eventsOf(e)}</dd>
<dt>State</dt><dd>${stateOf(e)}</dd><dt>Added</dt><dd>${when(e.createdAt)}</dd></dl>
<div class="row actions">${
    enabled
      ? [button(v, e, 'test', 'Send test event', ''), button(v, e, 'disable', 'Disable')]
      : button(v, e, 'enable', 'Enable', '')
  }${button(v, e, 'rotate', 'Rotate secret')}${button(v, e, 'delete', 'Delete', 'danger')}</div></div>`
}

const stateLabel = (ev: LoggedEvent) =>
  ev.state === 'pending'
    ? html`<span class="badge grace">pending</span> <span class="muted">next ${when(ev.nextAt)}</span>`
    : html`<span class="badge ${ev.state === 'delivered' ? 'active' : 'failed'}">${ev.state}</span>`

function eventRows(v: Viewer, endpointId: string, ev: LoggedEvent): Html {
  const span = Math.max(ev.attempts.length, 1)
  const head = html`<td rowspan="${span}"><code>${ev.type}</code><div class="muted mono">${ev.eventId}</div>
<div>${stateLabel(ev)}</div></td>`
  const resend = html`<td rowspan="${span}"><form class="inline" method="post"
action="/dashboard/webhooks/${endpointId}/resend">${csrfField(v)}
<input type="hidden" name="event" value="${ev.eventId}">
<button class="secondary small" aria-label="Resend ${ev.eventId}">Resend</button></form></td>`
  if (!ev.attempts.length)
    return html`<tr>${head}<td colspan="4" class="muted">No attempt yet (made ${when(ev.createdAt)})</td>${resend}</tr>`
  return html`${ev.attempts.map(
    (
      a,
      i
    ) => html`<tr>${i === 0 ? head : ''}<td class="time">${when(a.at, true)}</td><td>${statusBadge(a.status, a.answer)}</td>
<td class="num">${a.durationMs} ms</td><td><code class="answer">${a.answer || '(empty)'}</code></td>${
      i === 0 ? resend : ''
    }</tr>`
  )}`
}

export function deliveryLog(v: Viewer, endpointId: string, log: LogPage, first: boolean): Html {
  const pager = html`<div class="pager">${
    first ? html`<span></span>` : html`<a href="/dashboard/webhooks/${endpointId}">Newest</a>`
  }${log.next ? html`<a href="/dashboard/webhooks/${endpointId}?before=${log.next}">Older events</a>` : ''}</div>`
  if (!log.events.length)
    return html`<div class="table-wrap">${empty(
      'Nothing sent yet',
      html`<p>Events sent to this endpoint in the last 30 days show here. Send a test event to see one.</p>`
    )}</div>`
  return html`<div class="table-wrap scroll-x"><table class="log"><thead><tr><th>Event</th><th>Attempt (UTC)</th><th>Status</th>
<th class="num">Duration</th><th>Answer (first bytes)</th><th></th></tr></thead>
<tbody>${log.events.map((ev) => eventRows(v, endpointId, ev))}</tbody></table></div>${pager}`
}
