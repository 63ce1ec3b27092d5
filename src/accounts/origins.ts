import type { Logger } from '../ops/log.js'
import type { Sql } from '../storage/db.js'
import type { KeyStore } from './auth.js'
import type { Scope } from './scopes.js'

// Browser-safe lead keys: a key whose only scope is leads:write may name the web origins whose pages' scripts may use
// it (CORS). Such a key is public (it is in a page), so it can do nothing else: a key with any other scope refuses
// origins.

export const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/
const MAX_ORIGINS = 20

// Why `text` (comma-separated) is not a list of origins, or the origins: scheme, host and port only (a trailing slash
// dropped), https, or http for a loopback host; lower case, default port dropped, each once.
export function parseOrigins(text: string): { origins: string[] } | { error: string } {
  const names = text
    .split(/[,\s]+/)
    .map((n) => n.trim())
    .filter(Boolean)
  if (!names.length) return { error: 'no origin named' }
  if (names.length > MAX_ORIGINS) return { error: `at most ${MAX_ORIGINS} origins` }
  const origins: string[] = []
  for (const name of names) {
    const origin = originOf(name)
    if (typeof origin !== 'string') return { error: `${JSON.stringify(name.slice(0, 100))}: ${origin.error}` }
    if (!origins.includes(origin)) origins.push(origin)
  }
  return { origins }
}

function originOf(name: string): string | { error: string } {
  const url = URL.canParse(name) ? new URL(name) : null
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) return { error: 'not an http(s) origin' }
  if (url.username || url.password || url.search || url.hash || name.includes('?') || name.includes('#'))
    return { error: 'an origin is a scheme, a host and a port only' }
  if (url.pathname !== '/') return { error: 'an origin has no path (a trailing slash is all it may end with)' }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname))
    return { error: 'http is only for loopback hosts (localhost, 127.0.0.1, [::1]); use https' }
  return url.origin
}

// Why a key with `scopes` cannot have origins, or null when it can (its only scope is leads:write).
export function originsRefusal(scopes: readonly Scope[]): string | null {
  return scopes.length === 1 && scopes[0] === 'leads:write'
    ? null
    : 'only a key whose only scope is leads:write may have origins (a key in a web page must not spend the quota)'
}

export interface OriginSet {
  // Whether some key in force allows `origin` (for a CORS preflight, which carries no key).
  allows(origin: string): boolean
  close(): void
}

const RELOAD_MS = 60_000

// The origins some unrevoked, unexpired key allows, in memory: read whole at start, again when the key store's poll
// sees a key change (any process's, so within about a second), and every minute (a key that expired meanwhile).
export async function openOriginSet(sql: Sql, keys: KeyStore, log: Logger): Promise<OriginSet> {
  let allowed = new Set<string>()
  let loading: Promise<void> | null = null
  const load = async () => {
    const rows = await sql<{ origin: string }[]>`
      select distinct unnest(origins) as origin from api_keys
      where origins is not null and revoked_at is null and (expires_at is null or expires_at > now())`
    allowed = new Set(rows.map((r) => r.origin))
  }
  const reload = () => {
    loading ??= load()
      .catch((e) => log.warn('lead key origins: reload failed', { err: String(e) }))
      .finally(() => (loading = null))
  }
  await load()
  keys.onKeysChange(reload)
  const timer = setInterval(reload, RELOAD_MS).unref()
  return { allows: (origin) => allowed.has(origin), close: () => clearInterval(timer) }
}
