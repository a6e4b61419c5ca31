-- create index "turn_one_open_per_session" to table: "turns"
CREATE UNIQUE INDEX "turn_one_open_per_session" ON "turns" ("session_id") WHERE ((status)::text = 'OPEN'::text);
