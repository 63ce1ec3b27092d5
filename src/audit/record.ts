import type postgres from 'postgres'

// Who made a change: a dashboard user (by email, with the client's address), the command line (`cli`, with the
// operating-system user who ran it), an API key (by its prefix), or the service itself (`system`: lead retention).
export type Actor =
  | { kind: 'user'; email: string; address: string | null }
  | { kind: 'cli'; osUser: string }
  | { kind: 'key'; prefix: string }
  | { kind: 'system'; name: string }

// Every action the log records, in the order the dashboard's filter lists them.
export const AUDIT_ACTIONS = [
  'signin.succeeded',
  'signin.failed',
  'signout',
  'signout.everywhere',
  'password.changed',
  'signin_link.created',
  'account.created',
  'user.created',
  'user.changed',
  'plan.changed',
  'budget.changed',
  'retention.changed',
  'key.created',
  'key.rotated',
  'key.revoked',
  'key.scopes_narrowed',
  'key.limited',
  'key.form_changed',
  'key.captcha_changed',
  'key.budget_changed',
  'key.autoreply_changed',
  'member.invited',
  'member.role_changed',
  'member.removed',
  'webhook.added',
  'webhook.disabled',
  'webhook.enabled',
  'webhook.secret_rotated',
  'webhook.removed',
  'lead.updated',
  'lead.erased',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

// The values a change replaced and the ones it set: never a secret, a password or a token.
type Values = Record<string, string | number | boolean | null | string[]>

export interface AuditEntry {
  // null: a failed sign-in with an email that belongs to no account.
  accountId: string | null
  action: AuditAction
  // A key prefix, a user's email, an endpoint id.
  target: string | null
  before?: Values
  after?: Values
}

// Writes one entry in the caller's transaction, so that the change and its entry commit together. The time is the
// database's clock at the write.
export async function recordAudit(tx: postgres.TransactionSql, actor: Actor, e: AuditEntry): Promise<void> {
  const [kind, name, address] =
    actor.kind === 'cli'
      ? ['cli', actor.osUser, null]
      : actor.kind === 'key'
        ? ['key', actor.prefix, null]
        : actor.kind === 'system'
          ? ['system', actor.name, null]
          : ['user', actor.email, actor.address]
  await tx`
    insert into audit_log (account_id, actor_kind, actor, action, target, address, before, after)
    values (${e.accountId}, ${kind}, ${name}, ${e.action}, ${e.target}, ${address},
            ${e.before ? tx.json(e.before) : null}, ${e.after ? tx.json(e.after) : null})`
}

// The same, when the actor may be absent (a caller outside the dashboard and the CLI, such as a test's setup): then
// nothing is written.
export const audit = (tx: postgres.TransactionSql, actor: Actor | undefined, e: AuditEntry) =>
  actor ? recordAudit(tx, actor, e) : Promise.resolve()
