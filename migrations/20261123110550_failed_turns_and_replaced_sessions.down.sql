-- reverse: create index "session_tenant_external_key_expired_at" to table: "sessions"
DROP INDEX "session_tenant_external_key_expired_at";
-- reverse: modify "sessions" table
ALTER TABLE "sessions" DROP COLUMN "failed_turns";
