import * as v from 'valibot'
import { ApiError } from '../http/errors.js'
import { ALLOW_PRIVATE_HINT, assertPublicHost } from './address.js'
import { type EventType, SUBSCRIBABLE_TYPES } from '../outbox/catalogue.js'

export const ENDPOINT_KINDS = ['standard', 'slack'] as const
export type EndpointKind = (typeof ENDPOINT_KINDS)[number]

// What a kind is called where people see it (the dashboard, the CLI's list).
const KIND_LABELS: Record<EndpointKind, string> = { standard: 'Standard Webhooks', slack: 'Slack' }
export const kindLabel = (kind: EndpointKind) => KIND_LABELS[kind]

export interface EndpointInput {
  accountId: string
  url: string
  // 'standard' (the default) or 'slack': a Slack incoming-webhook URL, sent lead.created only, as `{"text": …}`.
  kind?: string
  events?: string[]
  description?: string
}

export interface CheckedEndpoint {
  accountId: string
  url: string
  kind: EndpointKind
  events: EventType[] | null
  description: string | null
}

const Input = v.object({
  accountId: v.pipe(v.string(), v.uuid('the account must be an account id')),
  url: v.pipe(v.string(), v.maxLength(2048, 'the URL must be at most 2048 characters'), v.url('must be a URL')),
  kind: v.optional(v.picklist(ENDPOINT_KINDS, `the kind is ${ENDPOINT_KINDS.join(' or ')}`), 'standard'),
  events: v.optional(
    v.pipe(
      v.array(v.picklist(SUBSCRIBABLE_TYPES, `event types are ${SUBSCRIBABLE_TYPES.join(', ')}`)),
      v.minLength(1, 'name at least one event type, or none for all')
    )
  ),
  description: v.optional(v.pipe(v.string(), v.maxLength(500, 'the description must be at most 500 characters'))),
})

// An endpoint's URL, kind, event types and description, checked: https (http too when private addresses are allowed),
// no credentials in the URL, a host that does not resolve to a private address unless allowed, and a Slack endpoint
// wanting lead.created only (it is the one event a Slack message is made of).
export async function checkEndpoint(input: EndpointInput, allowPrivate: boolean): Promise<CheckedEndpoint> {
  const parsed = v.safeParse(Input, input)
  if (!parsed.success) throw new ApiError({ code: 'invalid_request', message: parsed.issues[0].message })
  const url = new URL(parsed.output.url)
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) {
    const hint = allowPrivate ? '' : `; http: ${ALLOW_PRIVATE_HINT}`
    throw new ApiError({ code: 'invalid_request', message: `the URL must be ${schemes.join(' or ')}${hint}` })
  }
  if (url.username || url.password)
    throw new ApiError({ code: 'invalid_request', message: 'the URL must not carry credentials' })
  if (!allowPrivate) {
    try {
      await assertPublicHost(url.hostname)
    } catch (e) {
      const forbidden = (e as { code?: string }).code === 'WEBHOOK_FORBIDDEN_ADDRESS'
      const message = forbidden
        ? `the URL's host ${(e as Error).message}; such an address ${ALLOW_PRIVATE_HINT}`
        : `the URL's host cannot be resolved: ${(e as Error).message}`
      throw new ApiError({ code: 'invalid_request', message })
    }
  }
  const { accountId, kind, description } = parsed.output
  let events = parsed.output.events ? [...new Set(parsed.output.events)] : null
  if (kind === 'slack') {
    if (events && (events.length > 1 || events[0] !== 'lead.created'))
      throw new ApiError({ code: 'invalid_request', message: 'a slack endpoint receives lead.created only' })
    events = ['lead.created']
  }
  return { accountId, url: url.href, kind, events, description: description ?? null }
}
