-- reverse: create index "event_session_id_turn_sequence" to table: "events"
DROP INDEX "event_session_id_turn_sequence";
-- reverse: modify "events" table
ALTER TABLE "events" DROP COLUMN "turn";
