-- reverse: create index "ref_session_id_live" to table: "refs"
DROP INDEX "ref_session_id_live";
