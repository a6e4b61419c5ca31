-- reverse: create index "turn_session_id_number" to table: "turns"
DROP INDEX "turn_session_id_number";
-- reverse: create "turns" table
DROP TABLE "turns";
-- reverse: create index "artifacts_ref_id_key" to table: "artifacts"
DROP INDEX "artifacts_ref_id_key";
-- reverse: create index "artifact_session_id_status" to table: "artifacts"
DROP INDEX "artifact_session_id_status";
-- reverse: create "artifacts" table
DROP TABLE "artifacts";
-- reverse: create index "ref_session_id_turn_last_referenced" to table: "refs"
DROP INDEX "ref_session_id_turn_last_referenced";
-- reverse: create index "ref_session_id_ref" to table: "refs"
DROP INDEX "ref_session_id_ref";
-- reverse: create index "ref_session_id_entity_id" to table: "refs"
DROP INDEX "ref_session_id_entity_id";
-- reverse: create "refs" table
DROP TABLE "refs";
-- reverse: create index "session_tenant_user_id" to table: "sessions"
DROP INDEX "session_tenant_user_id";
-- reverse: create index "session_tenant_last_active_at" to table: "sessions"
DROP INDEX "session_tenant_last_active_at";
-- reverse: create index "session_tenant_external_key" to table: "sessions"
DROP INDEX "session_tenant_external_key";
-- reverse: create index "session_status_expires_at" to table: "sessions"
DROP INDEX "session_status_expires_at";
-- reverse: create "sessions" table
DROP TABLE "sessions";
-- reverse: create index "events_sequence_key" to table: "events"
DROP INDEX "events_sequence_key";
-- reverse: create index "event_session_id_sequence" to table: "events"
DROP INDEX "event_session_id_sequence";
-- reverse: create "events" table
DROP TABLE "events";
-- reverse: create index "entitytype_domain_table_name" to table: "entity_types"
DROP INDEX "entitytype_domain_table_name";
-- reverse: create index "entitytype_domain_name" to table: "entity_types"
DROP INDEX "entitytype_domain_name";
-- reverse: create "entity_types" table
DROP TABLE "entity_types";
-- reverse: create index "api_keys_hash_key" to table: "api_keys"
DROP INDEX "api_keys_hash_key";
-- reverse: create "api_keys" table
DROP TABLE "api_keys";
