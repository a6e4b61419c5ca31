-- reverse: create index "artifact_session_id_id" to table: "artifacts"
DROP INDEX "artifact_session_id_id";
-- reverse: create index "ref_session_id_id" to table: "refs"
DROP INDEX "ref_session_id_id";
-- reverse: create index "turn_session_id_id" to table: "turns"
DROP INDEX "turn_session_id_id";
