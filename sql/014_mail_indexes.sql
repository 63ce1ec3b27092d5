-- Mail deliveries go with their event (the events' 30-day prune) and with their user (a user removed from Team):
-- both deletes cascade here, and these indexes keep them from reading the whole table.
create index mail_deliveries_event on mail_deliveries (event_id) where event_id is not null;
create index mail_deliveries_user on mail_deliveries (user_id);
