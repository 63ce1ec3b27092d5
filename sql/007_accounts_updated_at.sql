-- The key store's poller asks for accounts changed since its last look, twice a second on every instance.
create index accounts_updated_at on accounts (updated_at);
