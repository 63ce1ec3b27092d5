-- Notes on a lead (issue 47): what was said, by whom and when. Append-only: a note is never changed (the trigger
-- refuses an update), only deleted with its lead.
create table lead_notes (
  id uuid primary key default gen_random_uuid(),
  lead_id uuid not null references leads(id) on delete cascade,
  author_kind text not null check (author_kind in ('user', 'key')),
  author text not null,
  text text not null,
  created_at timestamptz not null default clock_timestamp()
);
create index lead_notes_lead_created on lead_notes (lead_id, created_at);

create function lead_notes_append_only() returns trigger
language plpgsql as $$
begin
  raise exception 'lead_notes is append-only';
end
$$;
create trigger lead_notes_no_update before update on lead_notes
  for each row execute function lead_notes_append_only();
