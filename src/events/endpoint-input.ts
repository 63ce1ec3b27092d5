import * as v from 'valibot'
import { ApiError } from '../http/errors.js'
import { assertPublicHost } from './address.js'
import { type EventType, SUBSCRIBABLE_TYPES } from './catalogue.js'

export interface EndpointInput {
  accountId: string
  url: string
  events?: string[]
  description?: string
}

export interface CheckedEndpoint {
  accountId: string
  url: string
  events: EventType[] | null
  description: string | null
}

const Input = v.object({
  accountId: v.pipe(v.string(), v.uuid('the account must be an account id')),
  url: v.pipe(v.string(), v.maxLength(2048, 'the URL must be at most 2048 characters'), v.url('must be a URL')),
  events: v.optional(
    v.pipe(
      v.array(v.picklist(SUBSCRIBABLE_TYPES, `event types are ${SUBSCRIBABLE_TYPES.join(', ')}`)),
      v.minLength(1, 'name at least one event type, or none for all')
    )
  ),
  description: v.optional(v.pipe(v.string(), v.maxLength(500, 'the description must be at most 500 characters'))),
})

// An endpoint's URL, event types and description, checked: https (http too when private addresses are allowed), no
// credentials in the URL, and a host that does not resolve to a private address unless allowed.
export async function checkEndpoint(input: EndpointInput, allowPrivate: boolean): Promise<CheckedEndpoint> {
  const parsed = v.safeParse(Input, input)
  if (!parsed.success) throw new ApiError('invalid_request', parsed.issues[0].message)
  const url = new URL(parsed.output.url)
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) throw new ApiError('invalid_request', `the URL must be ${schemes.join(' or ')}`)
  if (url.username || url.password) throw new ApiError('invalid_request', 'the URL must not carry credentials')
  if (!allowPrivate) {
    try {
      await assertPublicHost(url.hostname)
    } catch (e) {
      const reason = (e as { code?: string }).code === 'WEBHOOK_FORBIDDEN_ADDRESS' ? '' : 'cannot be resolved: '
      throw new ApiError('invalid_request', `the URL's host ${reason}${(e as Error).message}`)
    }
  }
  const { accountId, events, description } = parsed.output
  return { accountId, url: url.href, events: events ? [...new Set(events)] : null, description: description ?? null }
}
