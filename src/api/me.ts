import { unauthorized, type KeyStore, type Principal } from '../accounts/auth.js'
import { callerOf } from '../accounts/caller.js'
import { spendOf } from '../accounts/spend.js'
import { BASE, route, type Route } from '../http/route.js'
import type { Quota } from '../quota/quota.js'
import type { Sql } from '../storage/db.js'
import { MeCache } from './me-cache.js'
import { Caller } from './schemas.js'

// GET /api/v1/me: the caller and their account's plan, quota and spend.
export function meRoute(sql: Sql, quota: Quota, keys: Pick<KeyStore, 'onAccountChange'>): Route {
  const me = createMe(sql, quota, keys)
  return route({
    method: 'GET',
    path: `${BASE}/me`,
    uses: ['key', 'database'],
    scope: 'me:read',
    summary: 'The authenticated user and the plan of their account',
    operationId: 'getMe',
    responses: { 200: { description: 'The caller', schema: Caller } },
    handle: ({ principal }) => me(principal),
  })
}

const ME_TTL_MS = 1000

// GET /me is answered from a cache (per account and user) of at most one second: dropped at once when this process
// reserves or gives back quota for the account, and within the key poller's interval when its plan changes anywhere.
// Its quota's `used` leaves out the units this process holds ahead for the account (quota/ahead.ts).
function createMe(sql: Sql, quota: Quota, keys: Pick<KeyStore, 'onAccountChange'>) {
  const cache = new MeCache()
  const drop = (accountId: string) => cache.drop(accountId)
  quota.onChange(drop)
  keys.onAccountChange(drop)

  async function load(principal: Principal, who: string, now: number) {
    const [caller, used, spend] = await Promise.all([
      callerOf(sql, principal.accountId, principal.userId),
      quota.used(principal.accountId),
      spendOf(sql, principal.accountId, quota.month()),
    ])
    if (!caller) throw unauthorized()
    const status = quota.status(caller.plan, used)
    const json = JSON.stringify({ user: caller.user, plan: caller.plan, quota: status, spend })
    cache.set(principal.accountId, who, { until: now + ME_TTL_MS, monthEnds: Date.parse(status.resets_at), json })
    return { status: 200, json }
  }

  return (principal: Principal) => {
    const now = performance.now()
    const who = principal.userId ?? ''
    const hit = cache.get(principal.accountId, who)
    if (hit && hit.until > now && hit.monthEnds > quota.now()) return { status: 200, json: hit.json }
    return load(principal, who, now)
  }
}
