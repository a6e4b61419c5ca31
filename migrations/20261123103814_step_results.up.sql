-- create "step_results" table
CREATE TABLE "step_results" ("id" uuid NOT NULL, "turn" bigint NOT NULL, "step" bigint NOT NULL, "kind" character varying NOT NULL, "description" text NOT NULL DEFAULT '', "data" jsonb NOT NULL, "refs" jsonb NOT NULL, "item_count" bigint NOT NULL DEFAULT 0, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "step_results_sessions_step_results" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "stepresult_session_id_turn_step" to table: "step_results"
CREATE UNIQUE INDEX "stepresult_session_id_turn_step" ON "step_results" ("session_id", "turn", "step");
