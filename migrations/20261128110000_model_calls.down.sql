-- reverse: create "model_calls" table (its indexes go with it)
DROP TABLE "model_calls";
