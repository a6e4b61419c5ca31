-- Events are numbered within their session and ordered across sessions by
-- transaction id below the snapshot horizon (docs/events.md), so no write
-- waits for another session's: the commit-time trigger, its global advisory
-- lock and its sequences go. Written by hand around atlas's diff of the ent
-- schema: ent does not describe triggers, sequences or data.
DROP TRIGGER IF EXISTS "events_sequence_at_commit" ON "events";
DROP FUNCTION IF EXISTS "events_sequence_at_commit"();
DROP SEQUENCE IF EXISTS "events_placeholder_seq";
DROP SEQUENCE IF EXISTS "events_sequence_seq";
-- drop index "event_session_id_sequence" from table: "events"
DROP INDEX "event_session_id_sequence";
-- drop index "events_sequence_key" from table: "events"
DROP INDEX "events_sequence_key";
-- Events written before keep their numbers: they increase within each
-- session, so a subscriber's cursor still resumes where it stopped, and a
-- session's next event continues from its highest. They committed long ago:
-- xid 0 puts them below every horizon.
ALTER TABLE "events" ADD COLUMN "xid" bigint NOT NULL DEFAULT 0;
ALTER TABLE "events" ALTER COLUMN "xid" DROP DEFAULT;
-- create index "event_session_id_sequence" to table: "events"
CREATE UNIQUE INDEX "event_session_id_sequence" ON "events" ("session_id", "sequence");
-- create index "event_xid_session_id_sequence" to table: "events"
CREATE INDEX "event_xid_session_id_sequence" ON "events" ("xid", "session_id", "sequence");
-- modify "sessions" table
ALTER TABLE "sessions" ADD COLUMN "event_sequence" bigint NOT NULL DEFAULT 0;
UPDATE "sessions" AS s SET "event_sequence" = e.newest
  FROM (SELECT "session_id", MAX("sequence") AS newest FROM "events" GROUP BY "session_id") AS e
  WHERE e."session_id" = s."id";
