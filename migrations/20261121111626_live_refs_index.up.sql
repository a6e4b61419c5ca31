-- create index "ref_session_id_live" to table: "refs"
CREATE INDEX "ref_session_id_live" ON "refs" ("session_id") WHERE ((entity_id IS NULL) OR (active_reason IS NOT NULL));
