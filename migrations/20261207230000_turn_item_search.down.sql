-- reverse: create index "turn_item_arguments_trgm" to table: "turn_items"
DROP INDEX "turn_item_arguments_trgm";
-- reverse: create index "turn_item_name_trgm" to table: "turn_items"
DROP INDEX "turn_item_name_trgm";
