DROP SEQUENCE IF EXISTS "events_sequence_seq";
