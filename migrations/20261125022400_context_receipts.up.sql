-- create "context_receipts" table: distributed by session on Citus, so its
-- primary key carries session_id (ent's says id alone: migrations_test.go's
-- entCannotSay, docs/scale-out.md)
CREATE TABLE "context_receipts" ("id" uuid NOT NULL, "turn" bigint NOT NULL, "node" character varying NOT NULL, "event_sequence" bigint NOT NULL, "budget" bigint NOT NULL, "tokenizer" character varying NOT NULL, "token_count" bigint NOT NULL, "sections" jsonb NOT NULL, "tiers" jsonb NOT NULL, "truncated_turns" bigint NOT NULL, "notes" jsonb NOT NULL, "text" text NULL, "text_sha256" character varying NOT NULL, "created_at" timestamptz NOT NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id", "session_id"), CONSTRAINT "context_receipts_sessions_context_receipts" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "contextreceipt_session_id_node_turn" to table: "context_receipts"
CREATE INDEX "contextreceipt_session_id_node_turn" ON "context_receipts" ("session_id", "node", "turn");
-- create index "contextreceipt_session_id_turn_node" to table: "context_receipts"
CREATE INDEX "contextreceipt_session_id_turn_node" ON "context_receipts" ("session_id", "turn", "node");
