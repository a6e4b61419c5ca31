-- reverse: create index "stepresult_session_id_turn_step" to table: "step_results"
DROP INDEX "stepresult_session_id_turn_step";
-- reverse: create "step_results" table
DROP TABLE "step_results";
