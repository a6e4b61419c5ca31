-- The nested page's sessions, grown: current_setting('grown.sessions')
-- sessions of tenant acme, each with 10 turns and 20 refs, shaped as
-- apitest.SessionGraph makes them (a session a second, a turn a minute,
-- the refs spread over the turns), with UUIDv7-shaped ids. The rows are
-- written in time order, as a live server writes them: a session's turns
-- and refs lie among other sessions', not next to each other.

CREATE FUNCTION pg_temp.uuid7(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7' ||
          substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid
$$;

CREATE TEMP TABLE page_sessions AS
  SELECT i AS n, timestamptz '2026-11-20 09:00:00+00' + i * interval '1 second' AS created_at
  FROM generate_series(0, current_setting('grown.sessions')::int - 1) i;
ALTER TABLE page_sessions ADD COLUMN id uuid;
UPDATE page_sessions SET id = pg_temp.uuid7(created_at);

INSERT INTO sessions (id, tenant, external_key, user_id, domain, status, system_prompt, engagement_summary,
    history_summary, reasoning_summary, current_turn, token_count, ref_counters, gen_counters, metadata,
    ttl_seconds, created_at, updated_at, last_active_at, expires_at, tokenizer, failed_turns, event_sequence)
  SELECT id, 'acme', 'acme-chat-' || lpad(n::text, 5, '0'), 'user-' || (n % 7), 'kitchen', 'ACTIVE',
         'You are Alfred, a kitchen assistant.', '', '', '', 10, 150, '{"recipe": 20}'::jsonb, '{}'::jsonb,
         '{}'::jsonb, 315360000, created_at, created_at + interval '10 minutes', created_at + interval '10 minutes',
         timestamptz '2036-01-01 00:00:00+00', 'cl100k_base', 0, 1
  FROM page_sessions ORDER BY created_at;

INSERT INTO turns (id, session_id, number, user_message, assistant_message, user_tokens, assistant_tokens, status,
    started_at, completed_at)
  SELECT pg_temp.uuid7(s.created_at + (t - 1) * interval '1 minute'), s.id, t, 'Turn ' || t || ': leeks for dinner?',
         'Leek and potato soup.', 10, 5, 'COMPLETED',
         s.created_at + (t - 1) * interval '1 minute', s.created_at + (t - 1) * interval '1 minute' + interval '2 seconds'
  FROM page_sessions s, generate_series(1, 10) t
  ORDER BY s.created_at + (t - 1) * interval '1 minute', s.n;

INSERT INTO refs (id, session_id, ref, entity_type, entity_id, label, action, turn_created, turn_last_referenced,
    created_at, updated_at)
  SELECT pg_temp.uuid7(s.created_at + (r - 1) / 2 * interval '1 minute'), s.id, 'recipe_' || r, 'recipe',
         gen_random_uuid(), 'Recipe ' || r, 'read', (r - 1) / 2 + 1, (r - 1) / 2 + 1,
         s.created_at + (r - 1) / 2 * interval '1 minute', s.created_at + (r - 1) / 2 * interval '1 minute'
  FROM page_sessions s, generate_series(1, 20) r
  ORDER BY s.created_at + (r - 1) / 2 * interval '1 minute', s.n, r;

DROP TABLE page_sessions;
