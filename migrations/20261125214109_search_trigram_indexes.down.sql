-- reverse: create index "turn_user_message_trgm" to table: "turns"
DROP INDEX "turn_user_message_trgm";
-- reverse: create index "turn_assistant_message_trgm" to table: "turns"
DROP INDEX "turn_assistant_message_trgm";
-- reverse: create index "session_user_id_trgm" to table: "sessions"
DROP INDEX "session_user_id_trgm";
-- reverse: create index "session_tenant_trgm" to table: "sessions"
DROP INDEX "session_tenant_trgm";
-- reverse: create index "session_external_key_trgm" to table: "sessions"
DROP INDEX "session_external_key_trgm";
-- reverse: create index "ref_label_trgm" to table: "refs"
DROP INDEX "ref_label_trgm";
