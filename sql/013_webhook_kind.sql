-- Slack-compatible endpoints. A webhook endpoint's kind: 'standard' gets every event it wants as the Standard
-- Webhooks envelope; 'slack' (an incoming-webhook URL) gets lead.created only, as a {"text": …} message.
alter table webhook_endpoints
  add column kind text not null default 'standard' check (kind in ('standard', 'slack')),
  add constraint webhook_endpoints_slack_leads
    check (kind = 'standard' or coalesce(event_types = '{lead.created}', false));
