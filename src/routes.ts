import type { KeyStore } from './accounts/auth.js'
import { healthzRoute, readyzRoute } from './api/health.js'
import { addNoteRoute, eraseLeadRoute, updateLeadRoute } from './api/lead-changes.js'
import { getLeadRoute, listLeadsRoute } from './api/lead-reads.js'
import { leadsRoute } from './api/leads.js'
import { meRoute } from './api/me.js'
import { openApiRoute } from './api/openapi.js'
import { chatCompletionsRoute } from './completions/chat-completions.js'
import { countTokensRoute } from './completions/count-tokens.js'
import { completionsRoute, type CompletionsDeps } from './completions/completions.js'
import { messagesRoute } from './completions/messages.js'
import { modelsRoute } from './completions/models.js'
import { EVENT_ENVELOPES } from './outbox/catalogue.js'
import { type LeadsOptions, openLeads } from './leads/create.js'
import type { Route } from './http/route.js'
import { formRoute } from './dashboard/form-post.js'
import type { AddressLimiter } from './http/cors.js'
import type { RateLimiter } from './limits/limits.js'
import type { Database } from './storage/db.js'
import type { VerifyCaptcha } from './leads/captcha.js'

// Every route the API's listener serves, in one list (the dashboard's pages under /dashboard are its own list,
// dashboard/dashboard.ts). Each route's file declares its method, path, what it uses and its handler; a new route is
// a line here.

export interface RouteDeps {
  db: Database
  keys: KeyStore
  completions: CompletionsDeps
  // Whether mail is on (a lead queues its mails), this process's delivery worker, woken after a lead's event
  // commits, the pool without the per-query deadline for the leads' batches, and how long a lead may wait.
  leads?: LeadsOptions
  // The form endpoint's limits (the key's rate limit, the per-address one) and its body limit.
  forms?: { limiter: RateLimiter; addresses?: AddressLimiter; bodyLimit: number }
  // Checks a lead's CAPTCHA token with its provider (leads/captcha.ts).
  verifyCaptcha: VerifyCaptcha
  // What GET /readyz shows beside the database's state.
  readiness?: () => Record<string, unknown>
}

// The public REST API under /api/v1, which its OpenAPI document describes.
export function apiRoutes({ db, keys, completions, leads = {}, verifyCaptcha }: RouteDeps): Route[] {
  const api: Route[] = [
    meRoute(db.sql, completions.quota, keys), // GET /api/v1/me
    completionsRoute(completions), // POST /api/v1/ai/completions
    chatCompletionsRoute(completions), // POST /api/v1/chat/completions
    modelsRoute(completions), // GET /api/v1/models
    messagesRoute(completions), // POST /api/v1/messages
    countTokensRoute(completions), // POST /api/v1/messages/count_tokens
    leadsRoute(openLeads(db.sql, leads), { sql: db.sql, verifyCaptcha }), // POST /api/v1/leads
    addNoteRoute(db.sql), // POST /api/v1/leads/:id/notes (first: LeadNote, then Lead, are the document's own)
    getLeadRoute(db.sql), // GET /api/v1/leads/:id (before the list, for the same reason)
    listLeadsRoute(db.sql), // GET /api/v1/leads
    updateLeadRoute(db.sql, leads.mail ?? false), // PATCH /api/v1/leads/:id
    eraseLeadRoute(db.sql), // DELETE /api/v1/leads/:id
  ]
  return [...api, openApiRoute(api, EVENT_ENVELOPES)] // GET /api/v1/openapi.json
}

// The API's routes, the form endpoint and the health probes (outside /api/v1, without a key): all the listener
// serves. The form endpoint has its own group commit of leads beside the API's.
export const listenerRoutes = (deps: RouteDeps): Route[] => [
  ...apiRoutes(deps),
  ...(deps.forms
    ? [
        formRoute({
          keys: deps.keys,
          leads: openLeads(deps.db.sql, deps.leads),
          verifyCaptcha: deps.verifyCaptcha,
          ...deps.forms,
        }),
      ]
    : []), // POST /forms/:prefix
  healthzRoute(), // GET /healthz
  readyzRoute(deps.db, deps.readiness), // GET /readyz
]
