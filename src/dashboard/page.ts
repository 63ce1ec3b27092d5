import type { IncomingMessage, ServerResponse } from 'node:http'
import type { SessionUser } from '../accounts/sessions.js'
import type { Actor } from '../audit/record.js'
import { clientAddress } from '../http/client-address.js'
import type { Config } from '../ops/config.js'
import type { Sql } from '../storage/db.js'
import type { Html } from './html.js'

export interface DashboardDeps {
  sql: Sql
  config: Config
  // The base of every printed link: STUDIO_PUBLIC_URL, else the listener's http://HOST:PORT.
  publicUrl: () => string
  clock?: () => number
}

export interface PageCtx {
  req: IncomingMessage
  res: ServerResponse
  id: string
  headers: string[]
  url: URL
  params: Record<string, string>
  form: URLSearchParams
  // Set on every page but the public ones (sign-in, links), where it may be null.
  user: SessionUser
  // The session cookie's token, when there is one.
  token: string | null
}

export type Outcome = Html | { redirect: string } | { status: number; page: Html } | { streamed: true }

export interface Page {
  method: 'GET' | 'POST'
  path: string
  access: 'public' | 'user' | 'admin'
  handle(ctx: PageCtx): Promise<Outcome> | Outcome
}

export const see = (location: string) => ({ redirect: location })

// The client's address (the socket's peer: the proxy's, behind one), for the audit log.
export const addressOf = (ctx: PageCtx) => clientAddress(ctx.req) || null

// The signed-in user, as the audit log names who made a change.
export const actorOf = (ctx: PageCtx): Actor => ({ kind: 'user', email: ctx.user.email, address: addressOf(ctx) })
