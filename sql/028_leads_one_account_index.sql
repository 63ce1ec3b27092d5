-- leads had two indexes on (account_id, created_at): 001's, and 009's (account_id, created_at desc, id desc) for the
-- dashboard's newest-first pages. A btree is read in either direction, so 009's serves every query 001's did (an
-- account's leads in a time range, in either order), and each lead stored paid for both.
-- contract: no release names this index; the planner uses leads_account_created_id for what it served.
drop index if exists leads_account_id_created_at;
