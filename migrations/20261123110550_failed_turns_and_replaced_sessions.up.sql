-- modify "sessions" table
ALTER TABLE "sessions" ADD COLUMN "failed_turns" bigint NOT NULL DEFAULT 0;
-- create index "session_tenant_external_key_expired_at" to table: "sessions"
CREATE INDEX "session_tenant_external_key_expired_at" ON "sessions" ("tenant", "external_key", "expired_at");
