-- create "api_keys" table
CREATE TABLE "api_keys" ("id" uuid NOT NULL, "name" character varying NOT NULL, "hash" character varying NOT NULL, "prefix" character varying NOT NULL, "role" character varying NOT NULL, "tenant" character varying NOT NULL DEFAULT '', "created_at" timestamptz NOT NULL, "last_used_at" timestamptz NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "api_keys_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys" ("hash");
-- create "entity_types" table
CREATE TABLE "entity_types" ("id" uuid NOT NULL, "domain" character varying NOT NULL, "name" character varying NOT NULL, "table_name" character varying NOT NULL, "id_field" character varying NOT NULL DEFAULT 'id', "label_field" character varying NOT NULL DEFAULT '', "label_template" character varying NOT NULL DEFAULT '', "fk_fields" jsonb NOT NULL, "nested_relations" jsonb NOT NULL, "detail_fields" jsonb NOT NULL, "data_legend" text NOT NULL DEFAULT '', "content_markers" jsonb NOT NULL, "condensed" boolean NOT NULL DEFAULT true, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "entitytype_domain_name" to table: "entity_types"
CREATE UNIQUE INDEX "entitytype_domain_name" ON "entity_types" ("domain", "name");
-- create index "entitytype_domain_table_name" to table: "entity_types"
CREATE UNIQUE INDEX "entitytype_domain_table_name" ON "entity_types" ("domain", "table_name");
-- create "events" table
CREATE TABLE "events" ("id" uuid NOT NULL, "sequence" bigint NOT NULL, "session_id" uuid NOT NULL, "tenant" character varying NOT NULL, "kind" character varying NOT NULL, "payload" jsonb NOT NULL, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "event_session_id_sequence" to table: "events"
CREATE INDEX "event_session_id_sequence" ON "events" ("session_id", "sequence");
-- create index "events_sequence_key" to table: "events"
CREATE UNIQUE INDEX "events_sequence_key" ON "events" ("sequence");
-- create "sessions" table
CREATE TABLE "sessions" ("id" uuid NOT NULL, "tenant" character varying NOT NULL, "external_key" character varying NOT NULL, "user_id" character varying NOT NULL DEFAULT '', "domain" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'ACTIVE', "system_prompt" text NOT NULL DEFAULT '', "focus" jsonb NULL, "engagement_summary" text NOT NULL DEFAULT '', "history_summary" text NOT NULL DEFAULT '', "reasoning_summary" text NOT NULL DEFAULT '', "pending_clarification" jsonb NULL, "current_turn" bigint NOT NULL DEFAULT 0, "token_count" bigint NOT NULL DEFAULT 0, "ref_counters" jsonb NOT NULL, "gen_counters" jsonb NOT NULL, "metadata" jsonb NOT NULL, "ttl_seconds" bigint NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "last_active_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "expired_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "session_status_expires_at" to table: "sessions"
CREATE INDEX "session_status_expires_at" ON "sessions" ("status", "expires_at");
-- create index "session_tenant_external_key" to table: "sessions"
CREATE UNIQUE INDEX "session_tenant_external_key" ON "sessions" ("tenant", "external_key") WHERE ((status)::text = 'ACTIVE'::text);
-- create index "session_tenant_last_active_at" to table: "sessions"
CREATE INDEX "session_tenant_last_active_at" ON "sessions" ("tenant", "last_active_at");
-- create index "session_tenant_user_id" to table: "sessions"
CREATE INDEX "session_tenant_user_id" ON "sessions" ("tenant", "user_id");
-- create "refs" table
CREATE TABLE "refs" ("id" uuid NOT NULL, "ref" character varying NOT NULL, "entity_type" character varying NOT NULL, "entity_id" uuid NULL, "label" text NOT NULL DEFAULT '', "action" character varying NOT NULL, "detail_level" character varying NULL, "full_turn" bigint NULL, "turn_created" bigint NOT NULL, "turn_last_referenced" bigint NOT NULL, "source_step" bigint NULL, "turn_promoted" bigint NULL, "active_reason" text NULL, "enrich_table" character varying NULL, "enrich_name_column" character varying NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "refs_sessions_refs" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "ref_session_id_entity_id" to table: "refs"
CREATE UNIQUE INDEX "ref_session_id_entity_id" ON "refs" ("session_id", "entity_id");
-- create index "ref_session_id_ref" to table: "refs"
CREATE UNIQUE INDEX "ref_session_id_ref" ON "refs" ("session_id", "ref");
-- create index "ref_session_id_turn_last_referenced" to table: "refs"
CREATE INDEX "ref_session_id_turn_last_referenced" ON "refs" ("session_id", "turn_last_referenced");
-- create "artifacts" table
CREATE TABLE "artifacts" ("id" uuid NOT NULL, "entity_type" character varying NOT NULL, "label" text NOT NULL DEFAULT '', "content" jsonb NOT NULL, "status" character varying NOT NULL DEFAULT 'PENDING', "revision" bigint NOT NULL DEFAULT 1, "created_turn" bigint NOT NULL, "promoted_turn" bigint NULL, "source_step" bigint NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "ref_id" uuid NOT NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "artifacts_refs_artifact" FOREIGN KEY ("ref_id") REFERENCES "refs" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "artifacts_sessions_artifacts" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "artifact_session_id_status" to table: "artifacts"
CREATE INDEX "artifact_session_id_status" ON "artifacts" ("session_id", "status");
-- create index "artifacts_ref_id_key" to table: "artifacts"
CREATE UNIQUE INDEX "artifacts_ref_id_key" ON "artifacts" ("ref_id");
-- create "turns" table
CREATE TABLE "turns" ("id" uuid NOT NULL, "number" bigint NOT NULL, "user_message" text NOT NULL DEFAULT '', "assistant_message" text NOT NULL DEFAULT '', "assistant_summary" text NOT NULL DEFAULT '', "user_tokens" bigint NOT NULL DEFAULT 0, "assistant_tokens" bigint NOT NULL DEFAULT 0, "status" character varying NOT NULL DEFAULT 'OPEN', "execution_summary" jsonb NULL, "started_at" timestamptz NOT NULL, "completed_at" timestamptz NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "turns_sessions_turns" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "turn_session_id_number" to table: "turns"
CREATE UNIQUE INDEX "turn_session_id_number" ON "turns" ("session_id", "number");
