import { BASE, route, type Route } from './app.js'
import type { Database, Sql } from './db.js'
import { unauthorized, type KeyStore, type Principal } from './auth.js'
import { ApiError } from './errors.js'
import type { Quota } from './quota.js'
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
export function meRoute(sql: Sql, quota: Quota, keys: Pick<KeyStore, 'onAccountChange'>): Route {
  const cache = new Map<string, Map<string, { until: number; monthEnds: number; json: string }>>()
  let size = 0
  const drop = (accountId: string) => {
    const entries = cache.get(accountId)
    if (entries) (size -= entries.size), cache.delete(accountId)
  }
  quota.onChange(drop)
  keys.onAccountChange(drop)
  return route({
    method: 'GET',
    path: `${BASE}/me`,
    auth: true,
    summary: 'The authenticated user and the plan of their account',
    operationId: 'getMe',
    responses: { 200: { description: 'The caller', schema: Caller } },
    errors: ['unauthorized', 'rate_limited'],
    handle({ principal }) {
      const now = performance.now()
      const who = principal.userId ?? ''
      const hit = cache.get(principal.accountId)?.get(who)
      if (hit && hit.until > now && hit.monthEnds > quota.now()) return { status: 200, json: hit.json }
      return load(principal, who, now)
    },
  })

  async function load(principal: Principal, who: string, now: number) {
    const [row] = await sql<MeRow[]>`
      select a.plan, coalesce(q.used, 0) as used, u.id, u.email, u.name, u.role
      from accounts a
      left join users u on u.id = ${principal.userId}
      left join quota_usage q on q.account_id = a.id and q.month = ${quota.month().month}
      where a.id = ${principal.accountId}`
    if (!row) throw unauthorized()
    const user = row.id ? { id: row.id, email: row.email, name: row.name, role: row.role } : null
    const status = quota.status(row.plan, row.used)
    const json = JSON.stringify({ user, plan: row.plan, quota: status })
    if (size >= ME_MAX_CACHED) (cache.clear(), (size = 0))
    let entries = cache.get(principal.accountId)
    if (!entries) cache.set(principal.accountId, (entries = new Map()))
    if (!entries.has(who)) size++
    entries.set(who, { until: now + ME_TTL_MS, monthEnds: Date.parse(status.resets_at), json })
    return { status: 200, json }
  }
}

export function leadsRoute(sql: Sql): Route {
  return route({
    method: 'POST',
    path: `${BASE}/leads`,
    auth: true,
    body: LeadInput,
    summary: 'Create a lead',
    operationId: 'createLead',
    responses: { 201: { description: 'The lead is stored', schema: LeadCreated } },
    errors: ['unauthorized', 'rate_limited', 'invalid_request', 'invalid_json', 'payload_too_large', 'unsupported_media_type', 'service_unavailable'],
    async handle({ principal, body: b }) {
      const [row] = await sql<{ id: string; created_at: Date }[]>`
        insert into leads (account_id, key_prefix, name, email, service, message, phone, company, budget, locale, source,
                           utm_source, utm_medium, utm_campaign)
        values (${principal.accountId}, ${principal.prefix}, ${b.name}, ${b.email}, ${b.service}, ${b.message},
                ${b.phone ?? null}, ${b.company ?? null}, ${b.budget ?? null}, ${b.locale ?? null}, ${b.source ?? null},
                ${b.utm?.source ?? null}, ${b.utm?.medium ?? null}, ${b.utm?.campaign ?? null})
        returning id, created_at`
      return { status: 201, body: { id: row.id, createdAt: row.created_at.toISOString() } }
    },
  })
}

export function healthRoutes(db: Database): Route[] {
  return [
    route({
      method: 'GET',
      path: '/healthz',
      auth: false,
      summary: 'The process is up',
      handle: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      auth: false,
      summary: 'The database answers',
      async handle() {
        if (await db.ready()) return { status: 200, body: { status: 'ready' } }
        throw new ApiError('service_unavailable', 'The database is not reachable', undefined, { 'retry-after': '2' })
      },
    }),
  ]
}
