-- Trigram indexes for the search of a turn's items by their tool name and
-- arguments (TurnWhereInput.itemContainsFold, ent/schema/turnitem.go), as
-- turn_item_content_trgm serves their text.
-- create index "turn_item_name_trgm" to table: "turn_items"
CREATE INDEX "turn_item_name_trgm" ON "turn_items" USING gin ("name" gin_trgm_ops);
-- create index "turn_item_arguments_trgm" to table: "turn_items"
CREATE INDEX "turn_item_arguments_trgm" ON "turn_items" USING gin ("arguments" gin_trgm_ops);
