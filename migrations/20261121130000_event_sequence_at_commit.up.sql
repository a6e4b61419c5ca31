-- An event's sequence is now assigned as its transaction commits rather than
-- when the event is inserted. A deferred constraint trigger takes the event
-- order lock and the next number during COMMIT, so the lock is held only
-- while the commit itself runs, never across a round trip to the server
-- (under load, that round trip was where writers queued on the lock).
-- Sequences still commit in order: the lock is transaction-scoped and held
-- until the commit is durable. At insert an event gets a negative
-- placeholder from a sequence of its own, which no reader ever sees (it is
-- replaced before the row commits), so sequence numbers stay dense.
-- Written by hand: ent's schema does not describe triggers.
CREATE SEQUENCE IF NOT EXISTS "events_placeholder_seq" AS bigint;
CREATE FUNCTION "events_sequence_at_commit"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- internal/store.eventOrderLock
  PERFORM pg_advisory_xact_lock(405154037761);
  UPDATE "events" SET "sequence" = nextval('events_sequence_seq') WHERE "id" = NEW."id";
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER "events_sequence_at_commit" AFTER INSERT ON "events"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "events_sequence_at_commit"();
