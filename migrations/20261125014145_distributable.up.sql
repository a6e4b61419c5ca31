-- The schema becomes distributable on Citus by session (docs/scale-out.md):
-- every primary key, unique index and foreign key among the session-scoped
-- tables includes sessions' id or session_id, and get-or-create's one live
-- session per key moves from a unique index on sessions to session_keys.
-- Written by hand around atlas's diff of the ent schema: ent gives every
-- table a primary key on id alone and makes an edge's foreign key single
-- column, so the primary keys and the artifact's foreign key below are
-- differences the drift test (migrations_test.go) knows by name.

-- create "session_keys" table
CREATE TABLE "session_keys" ("id" uuid NOT NULL, "tenant" character varying NOT NULL, "external_key" character varying NOT NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id"));
-- Every key names its live session, or its newest. The id is store.KeyID:
-- the MD5 of the tenant's length in bytes, a colon, the tenant and the key.
INSERT INTO "session_keys" ("id", "tenant", "external_key", "session_id")
  SELECT DISTINCT ON ("tenant", "external_key")
    md5(octet_length("tenant")::text || ':' || "tenant" || "external_key")::uuid, "tenant", "external_key", "id"
  FROM "sessions"
  ORDER BY "tenant", "external_key", ("status" = 'ACTIVE') DESC, "expired_at" DESC NULLS LAST, "created_at" DESC;
-- Sessions are found by key through session_keys (store.KeyedBy), and
-- openSession names the session its key names, not the newest expired one
-- of the key: the two indexes on the key have no reader left, and the
-- unique one could not stay on Citus.
-- drop index "session_tenant_external_key" from table: "sessions"
DROP INDEX "session_tenant_external_key";
-- drop index "session_tenant_external_key_expired_at" from table: "sessions"
DROP INDEX "session_tenant_external_key_expired_at";

-- An artifact's ref is found by (session_id, ref_id), and it is unique so.
ALTER TABLE "artifacts" DROP CONSTRAINT "artifacts_refs_artifact";
DROP INDEX "artifacts_ref_id_key";
-- create index "artifact_session_id_ref_id" to table: "artifacts"
CREATE UNIQUE INDEX "artifact_session_id_ref_id" ON "artifacts" ("session_id", "ref_id");
-- create index "artifact_ref_id" to table: "artifacts"
CREATE INDEX "artifact_ref_id" ON "artifacts" ("ref_id");

-- Primary keys on (id, session_id): id first, so that ent's lookups by id
-- alone still use the key's index; ids stay unique in practice (UUIDv7).
ALTER TABLE "turns" DROP CONSTRAINT "turns_pkey", ADD PRIMARY KEY ("id", "session_id");
ALTER TABLE "refs" DROP CONSTRAINT "refs_pkey", ADD PRIMARY KEY ("id", "session_id");
ALTER TABLE "artifacts" DROP CONSTRAINT "artifacts_pkey", ADD PRIMARY KEY ("id", "session_id");
ALTER TABLE "step_results" DROP CONSTRAINT "step_results_pkey", ADD PRIMARY KEY ("id", "session_id");
ALTER TABLE "events" DROP CONSTRAINT "events_pkey", ADD PRIMARY KEY ("id", "session_id");

-- The artifact's foreign key to its ref, through the session.
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_refs_artifact" FOREIGN KEY ("session_id", "ref_id")
  REFERENCES "refs" ("session_id", "id") ON UPDATE NO ACTION ON DELETE CASCADE;
