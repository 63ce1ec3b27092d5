import * as v from 'valibot'
import { BASE, route, type Reply, type Route } from '../http/route.js'
import type { Database, Sql } from '../storage/db.js'
import { unauthorized, type KeyStore, type Principal } from '../accounts/auth.js'
import { ApiError } from '../http/errors.js'
import { headerOf } from '../http/io.js'
import type { Quota } from '../limits/quota.js'
import { IDEMPOTENCY_HOURS, insertLead, type StoredLead } from '../leads/insert.js'
import { Caller, LeadCreated, LeadInput } from './schemas.js'

interface MeRow {
  plan: string
  used: number
  id: string | null
  email: string
  name: string | null
  role: string
}

const ME_TTL_MS = 1000
const ME_MAX_CACHED = 100_000

// GET /me is answered from a cache (per account and user) of at most one second: dropped at once when this process
// reserves or gives back quota for the account, and within the key poller's interval when its plan changes anywhere.
// Its quota's `used` leaves out the units this process holds ahead for the account (limits/holds.ts).
export function meRoute(sql: Sql, quota: Quota, keys: Pick<KeyStore, 'onAccountChange'>): Route {
  const cache = new Map<string, Map<string, { until: number; monthEnds: number; json: string }>>()
  let size = 0
  const drop = (accountId: string) => {
    const entries = cache.get(accountId)
    if (entries) {
      size -= entries.size
      cache.delete(accountId)
    }
  }
  quota.onChange(drop)
  keys.onAccountChange(drop)
  return route({
    method: 'GET',
    path: `${BASE}/me`,
    uses: ['key', 'database'],
    summary: 'The authenticated user and the plan of their account',
    operationId: 'getMe',
    responses: { 200: { description: 'The caller', schema: Caller } },
    handle({ principal }) {
      const now = performance.now()
      const who = principal.userId ?? ''
      const hit = cache.get(principal.accountId)?.get(who)
      if (hit && hit.until > now && hit.monthEnds > quota.now()) return { status: 200, json: hit.json }
      return load(principal, who, now)
    },
  })

  async function load(principal: Principal, who: string, now: number) {
    const heldBefore = quota.held(principal.accountId)
    const [row] = await sql<MeRow[]>`
      select a.plan, coalesce(q.used, 0) as used, u.id, u.email, u.name, u.role
      from accounts a
      left join users u on u.id = ${principal.userId}
      left join quota_usage q on q.account_id = a.id and q.month = ${quota.month().month}
      where a.id = ${principal.accountId}`
    if (!row) throw unauthorized()
    const user = row.id ? { id: row.id, email: row.email, name: row.name, role: row.role } : null
    // Units held both before and after the read are surely in it (a refill or give-back may land in between).
    const held = Math.min(heldBefore, quota.held(principal.accountId))
    const status = quota.status(row.plan, Math.max(0, row.used - held))
    const json = JSON.stringify({ user, plan: row.plan, quota: status })
    if (size >= ME_MAX_CACHED) {
      cache.clear()
      size = 0
    }
    let entries = cache.get(principal.accountId)
    if (!entries) cache.set(principal.accountId, (entries = new Map()))
    if (!entries.has(who)) size++
    entries.set(who, { until: now + ME_TTL_MS, monthEnds: Date.parse(status.resets_at), json })
    return { status: 200, json }
  }
}

const IdempotencyKey = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
  v.regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
  v.description(
    `Makes a retry safe: a request with the key and body of one made in the last ${IDEMPOTENCY_HOURS} hours ` +
      '(by any key of the same account) answers the lead that one created instead of creating another; ' +
      'the same key with another body is ' +
      'refused (422 idempotency_key_reused). 1 to 255 printable ASCII characters, e.g. a UUID.'
  )
)

const created = (lead: StoredLead): Reply => ({
  status: 201,
  body: { id: lead.id, createdAt: lead.createdAt.toISOString() },
  headers: lead.replayed ? { 'idempotent-replayed': 'true' } : undefined,
})

export function leadsRoute(sql: Sql): Route {
  return route({
    method: 'POST',
    path: `${BASE}/leads`,
    uses: ['key', 'database', 'idempotency'],
    body: LeadInput,
    headers: { 'Idempotency-Key': IdempotencyKey },
    summary: 'Create a lead',
    operationId: 'createLead',
    responses: {
      201: {
        description: 'The lead is stored (or, for a retried Idempotency-Key, was stored by the first request)',
        schema: LeadCreated,
        headers: {
          'Idempotent-Replayed': {
            description:
              'Present, `true`, when this answer repeats the one given to an earlier request with the same ' +
              'Idempotency-Key.',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      },
    },
    async handle({ req, principal, body }) {
      const key = headerOf(req, 'Idempotency-Key', IdempotencyKey)
      return created(await insertLead(sql, principal, body, key))
    },
  })
}

// `details` are shown by /readyz without deciding readiness (e.g. where the rate limits live now).
export function healthRoutes(db: Database, details: () => Record<string, unknown> = () => ({})): Route[] {
  return [
    route({
      method: 'GET',
      path: '/healthz',
      uses: [],
      summary: 'The process is up',
      handle: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      uses: ['database'],
      summary: 'The database answers',
      async handle() {
        if (await db.ready()) return { status: 200, body: { status: 'ready', details: details() } }
        throw new ApiError('service_unavailable', 'The database is not reachable', undefined, { 'retry-after': '2' })
      },
    }),
  ]
}
