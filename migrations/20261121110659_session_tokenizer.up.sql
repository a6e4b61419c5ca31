-- modify "sessions" table
ALTER TABLE "sessions" ADD COLUMN "tokenizer" character varying NOT NULL DEFAULT 'cl100k_base';
