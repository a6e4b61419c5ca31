DROP TRIGGER IF EXISTS "events_sequence_at_commit" ON "events";
DROP FUNCTION IF EXISTS "events_sequence_at_commit"();
DROP SEQUENCE IF EXISTS "events_placeholder_seq";
