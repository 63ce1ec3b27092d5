import type postgres from 'postgres'
import type { Sql } from '../storage/db.js'

// Who gets a mail for each new lead: each user chooses on the dashboard's Account page; until they do, owners get
// one and the other roles do not (users.lead_mail null means that default, so a user promoted later follows it).

const chosen = (sql: postgres.ISql) => sql`coalesce(lead_mail, role = 'owner')`

export async function leadMailChoice(sql: Sql, userId: string): Promise<boolean> {
  const [row] = await sql<{ on: boolean }[]>`select ${chosen(sql)} as on from users where id = ${userId}`
  return row?.on ?? false
}

export async function setLeadMailChoice(sql: Sql, userId: string, on: boolean): Promise<void> {
  await sql`update users set lead_mail = ${on} where id = ${userId}`
}

// The users of the account who want a mail per lead, as a fragment (user_id, email) for the statement that queues
// their mails in the lead's transaction (outbox/mail.ts). `accountId` may be a column of that statement.
export const leadMailRecipients = (sql: postgres.ISql, accountId: string | postgres.Fragment) => sql`
  select id as user_id, email from users where account_id = ${accountId} and ${chosen(sql)} order by created_at, id`

// Whether a user gets a mail when a lead is assigned to them (issue 47): on until they turn it off on the Account
// page (users.assigned_mail).
export async function assignedMailChoice(sql: Sql, userId: string): Promise<boolean> {
  const [row] = await sql<{ on: boolean }[]>`select assigned_mail as on from users where id = ${userId}`
  return row?.on ?? false
}

export async function setAssignedMailChoice(sql: Sql, userId: string, on: boolean): Promise<void> {
  await sql`update users set assigned_mail = ${on} where id = ${userId}`
}

// The new assignee of a lead, as a fragment (user_id, email) for outbox/mail.ts: no row when they turned it off.
export const assignedMailRecipient = (sql: postgres.ISql, userId: string) => sql`
  select id as user_id, email from users where id = ${userId} and assigned_mail`
