import { randomUUID } from 'node:crypto'
import type { Scope } from '../../src/accounts/scopes.js'
import type { TestServer } from './server.js'

const lead = { name: 'Ada', email: 'ada@example.com', service: 'audit', message: 'Hello' }

// Each scope's one operation against a server, with the status it answers when allowed.
export function scopedOperations(s: TestServer) {
  const operations: Record<Scope, (key: string) => Promise<Response>> = {
    'me:read': (key) => s.fetch('/api/v1/me', { key }),
    'leads:write': (key) => s.fetch('/api/v1/leads', { method: 'POST', key, json: lead }),
    'leads:read': (key) => s.fetch(`/api/v1/leads/${randomUUID()}`, { key }),
    'leads:manage': (key) =>
      s.fetch(`/api/v1/leads/${randomUUID()}`, { method: 'PATCH', key, json: { status: 'won' } }),
    'completions:write': (key) =>
      s.fetch('/api/v1/ai/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'Hi' }] } }),
  }
  const success: Record<Scope, number> = {
    'me:read': 200,
    'leads:write': 201,
    'leads:read': 404,
    'leads:manage': 404,
    'completions:write': 200,
  }
  return { operations, success }
}
