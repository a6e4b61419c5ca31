-- pg_trgm's trigram operator classes back the search indexes of the next
-- migration (ent/schema/search.go); PostgreSQL 13+ lets a database owner
-- create it (it is a trusted extension).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
