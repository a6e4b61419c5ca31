-- reverse: modify "sessions" table
ALTER TABLE "sessions" DROP COLUMN "tokenizer";
