-- reverse: create "turn_items" table (and its indexes)
DROP TABLE "turn_items";
-- reverse: modify "turns" table
ALTER TABLE "turns" DROP COLUMN "item_count";
