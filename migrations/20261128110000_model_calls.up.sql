-- create "model_calls" table: distributed by session on Citus, so its
-- primary key carries session_id, and its receipt is referenced through its
-- session (ent says id alone, and no foreign key to the receipt:
-- migrations_test.go's entCannotSay, docs/scale-out.md)
CREATE TABLE "model_calls" ("id" uuid NOT NULL, "receipt_id" uuid NOT NULL, "turn" bigint NOT NULL, "node" character varying NOT NULL, "model" character varying NOT NULL, "input_tokens" bigint NOT NULL, "output_tokens" bigint NOT NULL, "latency_ms" bigint NOT NULL, "cost" numeric(20,10) NOT NULL, "finish_reason" character varying NULL, "error" text NULL, "created_at" timestamptz NOT NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id", "session_id"), CONSTRAINT "model_calls_sessions_model_calls" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "model_calls_context_receipts_model_calls" FOREIGN KEY ("receipt_id", "session_id") REFERENCES "context_receipts" ("id", "session_id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "modelcall_session_id_receipt_id" to table: "model_calls"
CREATE INDEX "modelcall_session_id_receipt_id" ON "model_calls" ("session_id", "receipt_id");
-- create index "modelcall_session_id_turn" to table: "model_calls"
CREATE INDEX "modelcall_session_id_turn" ON "model_calls" ("session_id", "turn");
