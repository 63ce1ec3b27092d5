import type { Sql } from '../../src/storage/db.js'
import { setLeadMailChoice } from '../../src/accounts/lead-mail.js'
import { inviteMember } from '../../src/accounts/team.js'
import { addEndpoint } from '../../src/events/endpoints.js'
import { receiver } from './receiver.js'
import type { TestServer } from './server.js'
import type { Teardown } from './teardown.js'

// The places a lead's data reaches beyond its row, for the erasure and retention tests: an endpoint whose receiver
// echoes what it gets (its answers land in the delivery log), one that answers 500 with the same echo (its deliveries
// stay pending), and a member `slow@example.com` who wants lead mails (a test's SMTP server refuses `slow…` with a
// 451, so that mail stays pending).
export async function leadPlaces(t: Teardown, sql: Sql, accountId: string) {
  await setLeadMailChoice(sql, await inviteMember(sql, accountId, 'slow@example.com', 'member'), true)
  const echo = await receiver(t, (r, res) => res.end(r.body))
  const failing = await receiver(t, (r, res) => {
    res.statusCode = 500
    res.end(r.body)
  })
  for (const hook of [echo, failing]) await addEndpoint(sql, { accountId, url: hook.url }, true)
  return { echo, failing }
}

// POST /api/v1/leads with `key`: the new lead's id (anything but a 201 throws: this is a test's set-up).
export const leadPoster =
  (s: TestServer, key: string) =>
  async (lead: object, headers: Record<string, string> = {}): Promise<string> => {
    const r = await s.fetch('/api/v1/leads', { method: 'POST', key, headers, json: { service: 'web', ...lead } })
    if (r.status !== 201) throw new Error(`POST /leads: ${r.status}`)
    return ((await r.json()) as { id: string }).id
  }
