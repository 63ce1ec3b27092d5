import { BASE, route, type Route } from './app.js'
import type { Database, Sql } from './db.js'
import { unauthorized } from './auth.js'
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

export function meRoute(sql: Sql, quota: Quota): Route {
  return route({
    method: 'GET',
    path: `${BASE}/me`,
    auth: true,
    summary: 'The authenticated user and the plan of their account',
    operationId: 'getMe',
    responses: { 200: { description: 'The caller', schema: Caller } },
    errors: ['unauthorized', 'rate_limited'],
    async handle({ principal }) {
      const [row] = await sql<MeRow[]>`
        select a.plan, coalesce(q.used, 0) as used, u.id, u.email, u.name, u.role
        from accounts a
        left join users u on u.id = ${principal.userId}
        left join quota_usage q on q.account_id = a.id and q.month = ${quota.month().month}
        where a.id = ${principal.accountId}`
      if (!row) throw unauthorized()
      const user = row.id ? { id: row.id, email: row.email, name: row.name, role: row.role } : null
      return { status: 200, body: { user, plan: row.plan, quota: quota.status(row.plan, row.used) } }
    },
  })
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
