-- Each event knows the session's turn it belongs to (events.turn,
-- ent/schema/event.go): a turn's trace reads its own events by it instead of
-- by time. New events get it when written, in the statement that writes them.
-- modify "events" table
ALTER TABLE "events" ADD COLUMN "turn" bigint NULL;
-- Existing events: the turn their payload names (turn.*, turn.items_recorded,
-- step.recorded, context.recorded, model.call_recorded), when it is a whole
-- number from 1 (a build before the first turn names 0: null, as new events
-- before the first turn are); the others stay null. One UPDATE of the table
-- by its own rows, no subquery over another table, so Citus runs it on every
-- shard of a distributed events (docs/scale-out.md).
UPDATE "events" SET "turn" = ("payload" ->> 'turn')::bigint
	WHERE jsonb_typeof("payload" -> 'turn') = 'number'
	AND ("payload" ->> 'turn') ~ '^[1-9][0-9]{0,17}$';
-- create index "event_session_id_turn_sequence" to table: "events"
CREATE INDEX "event_session_id_turn_sequence" ON "events" ("session_id", "turn", "sequence");
