-- reverse: create "turn_items" table (and its indexes)
DROP TABLE "turn_items";
