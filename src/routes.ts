import { BASE, route, type Route } from './app.js'
import type { Database, Sql } from './db.js'
import { ApiError } from './errors.js'
import { Caller, LeadCreated, LeadInput } from './schemas.js'

interface UserRow {
  id: string
  email: string
  name: string | null
  role: string
}

export function meRoute(sql: Sql): Route {
  return route({
    method: 'GET',
    path: `${BASE}/me`,
    auth: true,
    summary: 'The authenticated user and the plan of their account',
    operationId: 'getMe',
    responses: { 200: { description: 'The caller', schema: Caller } },
    errors: ['unauthorized', 'rate_limited'],
    async handle({ principal }) {
      const [account] = await sql<{ plan: string }[]>`select plan from accounts where id = ${principal.accountId}`
      let user: UserRow | null = null
      if (principal.userId) {
        ;[user] = await sql<UserRow[]>`select id, email, name, role from users where id = ${principal.userId}`
      }
      if (!account) throw new ApiError('unauthorized', 'Missing or invalid API key')
      return { status: 200, body: { user: user ?? null, plan: account.plan } }
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
