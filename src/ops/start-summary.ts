import { resolve } from 'node:path'
import { type Config, mailIsOn } from './config.js'
import { aiSummary } from './upstream-list.js'

// The database as the start names it: the embedded one's directory, or PostgreSQL's host and database, never its
// user or password.
function databaseSummary(config: Pick<Config, 'DATABASE_URL' | 'STUDIO_DATA_DIR'>, mode: string): string {
  if (config.DATABASE_URL === undefined) {
    const shared = mode === 'embedded-client' ? ", another process's" : ''
    return `embedded in ${resolve(config.STUDIO_DATA_DIR)}${shared}`
  }
  const url = new URL(config.DATABASE_URL)
  return `PostgreSQL at ${url.host}${url.pathname}`
}

// The fields of the line `studio serve` prints once it listens: what an operator checks first.
export function startSummary(config: Config, where: { url: string; publicUrl: string; databaseMode: string }) {
  return {
    url: where.url,
    dashboard: config.STUDIO_DASHBOARD === 'on' ? `${where.publicUrl}/dashboard` : 'off',
    database: databaseSummary(config, where.databaseMode),
    ai: aiSummary(config),
    mail: mailIsOn(config) ? 'on' : 'off',
    pid: process.pid,
  }
}
