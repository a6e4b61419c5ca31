-- Trigram indexes for the searched text columns (ent/schema/search.go,
-- docs/fairness.md); only what ent can say: the other differences atlas
-- prints are the distributable migration's (migrations_test.go).
-- create index "ref_label_trgm" to table: "refs"
CREATE INDEX "ref_label_trgm" ON "refs" USING gin ("label" gin_trgm_ops);
-- create index "session_external_key_trgm" to table: "sessions"
CREATE INDEX "session_external_key_trgm" ON "sessions" USING gin ("external_key" gin_trgm_ops);
-- create index "session_tenant_trgm" to table: "sessions"
CREATE INDEX "session_tenant_trgm" ON "sessions" USING gin ("tenant" gin_trgm_ops);
-- create index "session_user_id_trgm" to table: "sessions"
CREATE INDEX "session_user_id_trgm" ON "sessions" USING gin ("user_id" gin_trgm_ops);
-- create index "turn_assistant_message_trgm" to table: "turns"
CREATE INDEX "turn_assistant_message_trgm" ON "turns" USING gin ("assistant_message" gin_trgm_ops);
-- create index "turn_user_message_trgm" to table: "turns"
CREATE INDEX "turn_user_message_trgm" ON "turns" USING gin ("user_message" gin_trgm_ops);
