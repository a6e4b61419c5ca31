-- reverse: create index "session_tenant_id" to table: "sessions"
DROP INDEX "session_tenant_id";
-- reverse: create index "session_tenant_created_at" to table: "sessions"
DROP INDEX "session_tenant_created_at";
-- reverse: create index "session_last_active_at" to table: "sessions"
DROP INDEX "session_last_active_at";
-- reverse: create index "session_created_at" to table: "sessions"
DROP INDEX "session_created_at";
-- reverse: create index "contextreceipt_session_id_id" to table: "context_receipts"
DROP INDEX "contextreceipt_session_id_id";
-- reverse: create index "stepresult_session_id_id" to table: "step_results"
DROP INDEX "stepresult_session_id_id";
-- reverse: create index "event_session_id_id" to table: "events"
DROP INDEX "event_session_id_id";
