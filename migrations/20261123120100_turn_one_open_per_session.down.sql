-- reverse: create index "turn_one_open_per_session" to table: "turns"
DROP INDEX "turn_one_open_per_session";
