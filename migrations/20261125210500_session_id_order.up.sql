-- A session's turns, refs and artifacts in id order: nested pages and ent's
-- eager loads read them as WHERE session_id = $1 ORDER BY id LIMIT n. The
-- primary keys are (id, session_id) (distributable), so without these the
-- planner walks a whole primary key in id order for a long session, and a
-- page's cost grows with the table rather than with the page
-- (graph/plans_test.go, docs/performance.md).
-- create index "turn_session_id_id" to table: "turns"
CREATE INDEX "turn_session_id_id" ON "turns" ("session_id", "id");
-- create index "ref_session_id_id" to table: "refs"
CREATE INDEX "ref_session_id_id" ON "refs" ("session_id", "id");
-- create index "artifact_session_id_id" to table: "artifacts"
CREATE INDEX "artifact_session_id_id" ON "artifacts" ("session_id", "id");
