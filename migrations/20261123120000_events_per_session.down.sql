-- Back to one global sequence numbered at commit: events are renumbered in
-- the order of the feed across sessions (a subscriber's per-session cursor
-- does not survive the downgrade).
ALTER TABLE "sessions" DROP COLUMN "event_sequence";
DROP INDEX "event_xid_session_id_sequence";
DROP INDEX "event_session_id_sequence";
UPDATE "events" AS e SET "sequence" = n.global
  FROM (SELECT "id", row_number() OVER (ORDER BY "xid", "session_id", "sequence") AS global FROM "events") AS n
  WHERE n."id" = e."id";
ALTER TABLE "events" DROP COLUMN "xid";
CREATE UNIQUE INDEX "events_sequence_key" ON "events" ("sequence");
CREATE INDEX "event_session_id_sequence" ON "events" ("session_id", "sequence");
CREATE SEQUENCE IF NOT EXISTS "events_sequence_seq" AS bigint;
SELECT setval('events_sequence_seq', COALESCE((SELECT MAX("sequence") FROM "events"), 0) + 1, false);
CREATE SEQUENCE IF NOT EXISTS "events_placeholder_seq" AS bigint;
CREATE FUNCTION "events_sequence_at_commit"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(405154037761);
  UPDATE "events" SET "sequence" = nextval('events_sequence_seq') WHERE "id" = NEW."id";
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER "events_sequence_at_commit" AFTER INSERT ON "events"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "events_sequence_at_commit"();
