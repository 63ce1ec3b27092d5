import type { Config } from './config.js'
import { baseUrl } from './listen.js'

// `studio healthcheck`: asks the running server's GET /healthz, for a container HEALTHCHECK (a distroless image
// has no shell or curl). A wildcard HOST is reached over loopback.
export function healthUrl(config: Pick<Config, 'HOST' | 'PORT'>): string {
  const host =
    config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST === '::' || config.HOST === '[::]' ? '::1' : config.HOST
  return `${baseUrl(host, config.PORT)}/healthz`
}

export async function healthcheck(config: Pick<Config, 'HOST' | 'PORT'>, timeoutMs = 5000): Promise<string | null> {
  const url = healthUrl(config)
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
    await r.arrayBuffer()
    return r.ok ? null : `${url} answered ${r.status}`
  } catch (e) {
    return `${url}: ${(e as Error).message}`
  }
}
