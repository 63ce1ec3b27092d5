import type { Logger } from '../ops/log.js'
import type { Sql } from '../storage/db.js'
import type { EventData } from '../outbox/catalogue.js'
import type { LaneSpec } from './lane.js'
import {
  type ClaimedMail,
  claimDueMails,
  finishMailAttempt,
  type MailOutcome,
  pruneMail,
  releaseMailClaims,
} from './mail-deliveries.js'
import type { MailMessage } from '../outbox/mail.js'
import type { Mail, Mailer, Sent } from './mailer.js'
import { nextDelayMs } from './schedule.js'

// Mail deliveries as a lane of the delivery worker: each claimed mail is made (a lead mail from its event, an
// assignee's from its lead.updated event, a link mail from its stored message), sent once, and judged: delivered; refused for good (5xx) → failed; anything else
// retried on the webhooks' schedule (schedule.ts) until it is exhausted. Logs name the delivery, never an address.

export type RenderLeadMail = (lead: EventData<'lead.created'>) => MailMessage
export type RenderAssignedMail = (update: EventData<'lead.updated'>) => MailMessage

export interface MailLaneDeps {
  sql: Sql
  mailer: Mailer
  renderLead: RenderLeadMail
  renderAssigned: RenderAssignedMail
  log: Logger
  clock: () => number
  random: () => number
  onOutcome?: (outcome: MailOutcome['kind']) => void
}

// A send's timeouts (mailer.ts) are 30 s each; a claim outlasts a slow one.
const LEASE_MS = 120_000
const CONCURRENCY = 4

// A link mail is given up when its next attempt would come after its link expired.
function mailOutcome(c: ClaimedMail, sent: Sent, now: number, random: () => number): MailOutcome {
  if (sent.result === 'delivered') return { kind: 'delivered' }
  const delay = sent.result === 'permanent' ? null : nextDelayMs(c.attempts + 1, random)
  if (delay === null || (c.expiresAt && c.expiresAt.getTime() <= now + delay)) return { kind: 'failed' }
  return { kind: 'retry', nextAt: new Date(now + delay) }
}

// An erased lead's mails are cancelled with it; an assignee's whose event is a tombstone all the same has nothing
// to send.
function mailOf(c: ClaimedMail, d: Pick<MailLaneDeps, 'renderLead' | 'renderAssigned'>): Mail | null {
  if (c.kind === 'lead' && c.eventBody) {
    const lead = (JSON.parse(c.eventBody) as { data: EventData<'lead.created'> }).data
    return { to: c.recipient, replyTo: lead.email, ...d.renderLead(lead) }
  }
  if (c.kind === 'assigned' && c.eventBody) {
    const update = (JSON.parse(c.eventBody) as { data: EventData<'lead.updated'> }).data
    return update.changes ? { to: c.recipient, ...d.renderAssigned(update) } : null
  }
  return c.message ? { to: c.recipient, ...c.message } : null
}

export function mailLane(d: MailLaneDeps): LaneSpec<ClaimedMail> {
  // A send the worker's stop cut short (or that it never started) is not finished: the lane gives its claim back.
  // The server may have taken it already (at least once, as for a process that dies).
  async function run(c: ClaimedMail, stopping: AbortSignal) {
    if (stopping.aborted) return
    const at = new Date(d.clock())
    const mail = mailOf(c, d)
    const sent: Sent = mail
      ? await d.mailer.send(mail, stopping)
      : { result: 'permanent', code: null, answer: '(nothing to send: the message is gone)' }
    if (sent.result === 'stopped') return
    const outcome = mailOutcome(c, sent, at.getTime(), d.random)
    await finishMailAttempt(d.sql, c, { at, code: sent.code, answer: sent.answer }, outcome)
    d.onOutcome?.(outcome.kind)
    const line = { mail: c.id, kind: c.kind, outcome: outcome.kind, code: sent.code }
    if (outcome.kind === 'failed') d.log.warn('mail not delivered', line)
    else d.log.debug('mail attempt', line)
  }
  return {
    concurrency: CONCURRENCY,
    claim: (now, limit) => claimDueMails(d.sql, now, LEASE_MS, limit),
    run,
    release: (claims) => releaseMailClaims(d.sql, claims),
    prune: (now) => pruneMail(d.sql, now),
    onError: (c, e) => d.log.error('mail delivery failed', { mail: c.id, err: String(e) }),
  }
}
