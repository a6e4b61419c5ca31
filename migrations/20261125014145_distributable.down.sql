-- reverse: the artifact's foreign key through the session
ALTER TABLE "artifacts" DROP CONSTRAINT "artifacts_refs_artifact";
-- reverse: primary keys on (id, session_id)
ALTER TABLE "events" DROP CONSTRAINT "events_pkey", ADD PRIMARY KEY ("id");
ALTER TABLE "step_results" DROP CONSTRAINT "step_results_pkey", ADD PRIMARY KEY ("id");
ALTER TABLE "artifacts" DROP CONSTRAINT "artifacts_pkey", ADD PRIMARY KEY ("id");
ALTER TABLE "refs" DROP CONSTRAINT "refs_pkey", ADD PRIMARY KEY ("id");
ALTER TABLE "turns" DROP CONSTRAINT "turns_pkey", ADD PRIMARY KEY ("id");
-- reverse: create index "artifact_session_id_ref_id" to table: "artifacts"
DROP INDEX "artifact_session_id_ref_id";
DROP INDEX "artifact_ref_id";
CREATE UNIQUE INDEX "artifacts_ref_id_key" ON "artifacts" ("ref_id");
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_refs_artifact" FOREIGN KEY ("ref_id")
  REFERENCES "refs" ("id") ON UPDATE NO ACTION ON DELETE CASCADE;
-- reverse: drop index "session_tenant_external_key" from table: "sessions"
CREATE UNIQUE INDEX "session_tenant_external_key" ON "sessions" ("tenant", "external_key") WHERE ((status)::text = 'ACTIVE'::text);
-- reverse: drop index "session_tenant_external_key_expired_at" from table: "sessions"
CREATE INDEX "session_tenant_external_key_expired_at" ON "sessions" ("tenant", "external_key", "expired_at");
-- reverse: create "session_keys" table
DROP TABLE "session_keys";
