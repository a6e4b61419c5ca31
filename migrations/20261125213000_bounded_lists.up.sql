-- Every page of a list reads about as many rows as it shows, however big
-- the tables grow (graph/plans_test.go, docs/performance.md):
-- a session's events, step results and context receipts in id order, as
-- their connections page them by default (the primary keys are (id,
-- session_id), which only a whole walk reads in that order) ...
-- create index "event_session_id_id" to table: "events"
CREATE INDEX "event_session_id_id" ON "events" ("session_id", "id");
-- create index "stepresult_session_id_id" to table: "step_results"
CREATE INDEX "stepresult_session_id_id" ON "step_results" ("session_id", "id");
-- create index "contextreceipt_session_id_id" to table: "context_receipts"
CREATE INDEX "contextreceipt_session_id_id" ON "context_receipts" ("session_id", "id");
-- ... and sessions newest or recently active first, across tenants and
-- within one, and in id order within a tenant.
-- create index "session_created_at" to table: "sessions"
CREATE INDEX "session_created_at" ON "sessions" ("created_at");
-- create index "session_last_active_at" to table: "sessions"
CREATE INDEX "session_last_active_at" ON "sessions" ("last_active_at");
-- create index "session_tenant_created_at" to table: "sessions"
CREATE INDEX "session_tenant_created_at" ON "sessions" ("tenant", "created_at");
-- create index "session_tenant_id" to table: "sessions"
CREATE INDEX "session_tenant_id" ON "sessions" ("tenant", "id");
