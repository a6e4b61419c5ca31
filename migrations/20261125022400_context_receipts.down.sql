-- reverse: create index "contextreceipt_session_id_turn_node" to table: "context_receipts"
DROP INDEX "contextreceipt_session_id_turn_node";
-- reverse: create index "contextreceipt_session_id_node_turn" to table: "context_receipts"
DROP INDEX "contextreceipt_session_id_node_turn";
-- reverse: create "context_receipts" table
DROP TABLE "context_receipts";
