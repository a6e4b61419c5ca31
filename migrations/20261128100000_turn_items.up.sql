-- create "turn_items" table: a turn's items as the agent produced them
-- (messages of every role, function calls, their outputs, reasoning). Its
-- primary key carries session_id, distributed by session on Citus like
-- every session-scoped table (ent's says id alone: migrations_test.go's
-- entCannotSay, docs/scale-out.md).
CREATE TABLE "turn_items" ("id" uuid NOT NULL, "turn" bigint NOT NULL, "position" bigint NOT NULL, "kind" character varying NOT NULL, "role" character varying NOT NULL DEFAULT '', "name" text NOT NULL DEFAULT '', "call_id" text NOT NULL DEFAULT '', "arguments" text NOT NULL DEFAULT '', "content" text NOT NULL DEFAULT '', "json" text NOT NULL, "tokens" bigint NOT NULL DEFAULT 0, "created_at" timestamptz NOT NULL, "session_id" uuid NOT NULL, PRIMARY KEY ("id", "session_id"), CONSTRAINT "turn_items_sessions_turn_items" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "turn_item_content_trgm" to table: "turn_items"
CREATE INDEX "turn_item_content_trgm" ON "turn_items" USING gin ("content" gin_trgm_ops);
-- create index "turnitem_session_id_turn_position" to table: "turn_items"
CREATE UNIQUE INDEX "turnitem_session_id_turn_position" ON "turn_items" ("session_id", "turn", "position");
-- modify "turns" table: how many items each turn has, so that a build
-- reads items only when a turn it shows has some
ALTER TABLE "turns" ADD COLUMN "item_count" bigint NOT NULL DEFAULT 0;
