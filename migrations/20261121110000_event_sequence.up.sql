-- Event sequence numbers come from this sequence, taken only while holding
-- the transaction-scoped event order lock (internal/store), so they commit in
-- order. Written by hand: ent's schema does not describe sequences.
CREATE SEQUENCE IF NOT EXISTS "events_sequence_seq" AS bigint;
SELECT setval('events_sequence_seq', COALESCE((SELECT MAX("sequence") FROM "events"), 0) + 1, false);
