import type { EventData } from '../outbox/catalogue.js'

// What a Slack-compatible endpoint (an incoming-webhook URL) is sent for a lead: `{"text": …}`, a short message with
// the lead's name, email, company and message. What the lead typed is escaped by Slack's rules (&, < and >), so it
// shows as written and can neither mention anyone (<!channel>) nor make a link; a long message is cut.

const MESSAGE_CHARS = 500

const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

const cut = (s: string, n: number) => ([...s].length > n ? `${[...s].slice(0, n).join('')}…` : s)

// The message for an event's envelope (the body a standard endpoint gets): a lead, or the dashboard's test event.
export function slackMessage(envelope: string): string {
  const event = JSON.parse(envelope) as { type: string; data: unknown }
  if (event.type === 'webhook.test')
    return JSON.stringify({ text: 'A test message from Studio: new leads will show here.' })
  if (event.type !== 'lead.created') return JSON.stringify({ text: slackEscape(`Studio event: ${event.type}`) })
  const lead = event.data as EventData<'lead.created'>
  const who = `${lead.name} (${lead.email})${lead.company ? `, ${lead.company}` : ''}`
  const message = cut(lead.message.trim(), MESSAGE_CHARS)
    .split('\n')
    .map((line) => `> ${slackEscape(line)}`)
    .join('\n')
  return JSON.stringify({ text: `*New lead:* ${slackEscape(who)}\n${message}` })
}
