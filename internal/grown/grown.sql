-- A grown database with the skew of a real deployment: many short sessions
-- (a chat or two and gone) and a few long-running ones that hold most of
-- the turns, refs and events. Written with set-based SQL so that half a
-- million rows load in seconds; apitest.NewGrown clones it from a template, make load loads it with -grown.
--
--   short sessions: 8,000 x (3 turns, 6 refs, 8 events), tenants acme and globex
--   long sessions:  4 x (10,000 turns, 30,000 refs, 25,000 events,
--                   10,000 step results, 3,000 generated refs with artifacts
--                   of which 3 pending, 2,000 context receipts), tenant acme
--
-- Ids are UUIDv7-shaped (time first), as the server makes them, so that an
-- order by id is an order by time, as in production.

CREATE FUNCTION pg_temp.uuid7(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7' ||
          substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid
$$;

CREATE TEMP TABLE grown_sessions AS
  SELECT i AS n, i > 8000 AS long,
         CASE WHEN i > 8000 OR i % 2 = 0 THEN 'acme' ELSE 'globex' END AS tenant,
         CASE WHEN i > 8000 THEN timestamptz '2026-09-01 08:00:00+00' + (i - 8000) * interval '1 hour'
              ELSE timestamptz '2026-10-01 00:00:00+00' + i * interval '5 minutes' END AS created_at,
         CASE WHEN i > 8000 THEN 10000 ELSE 3 END AS turns,
         CASE WHEN i > 8000 THEN 30000 ELSE 6 END AS refs,
         CASE WHEN i > 8000 THEN 25000 ELSE 8 END AS events
  FROM generate_series(1, 8004) i;
ALTER TABLE grown_sessions ADD COLUMN id uuid;
UPDATE grown_sessions SET id = pg_temp.uuid7(created_at);

INSERT INTO sessions (id, tenant, external_key, user_id, domain, status, system_prompt, engagement_summary,
    history_summary, reasoning_summary, current_turn, token_count, ref_counters, gen_counters, metadata,
    ttl_seconds, created_at, updated_at, last_active_at, expires_at, tokenizer, failed_turns, event_sequence)
  SELECT id, tenant, 'grown-' || n, 'user-' || (n % 97), 'kitchen', 'ACTIVE',
         'You are Alfred, a kitchen assistant.', '', CASE WHEN long THEN 'The user plans dinners every week.' ELSE '' END, '',
         turns, turns * 23, jsonb_build_object('recipe', refs), CASE WHEN long THEN '{"recipe": 3000}'::jsonb ELSE '{}'::jsonb END,
         '{}'::jsonb, 315360000,
         created_at, created_at + turns * interval '1 minute',
         CASE WHEN long THEN timestamptz '2026-11-25 00:00:00+00' + n * interval '1 second' ELSE created_at + turns * interval '1 minute' END,
         timestamptz '2036-01-01 00:00:00+00', 'cl100k_base', 0, events
  FROM grown_sessions;

INSERT INTO session_keys (id, tenant, external_key, session_id)
  SELECT md5(octet_length(tenant)::text || ':' || tenant || 'grown-' || n)::uuid, tenant, 'grown-' || n, id
  FROM grown_sessions;

INSERT INTO turns (id, session_id, number, user_message, assistant_message, assistant_summary, user_tokens,
    assistant_tokens, status, execution_summary, started_at, completed_at)
  SELECT pg_temp.uuid7(s.created_at + t * interval '1 minute'), s.id, t,
         'Turn ' || t || ': what can I cook tonight with what I have?',
         'You could make a curry or a pasta.', 'You could make a curry or a pasta.', 14, 9, 'COMPLETED',
         '{"decision": "plan_direct", "goal": "Suggest dinner", "phase": "exploring", "steps": [{"step": 1, "kind": "read", "description": "Read recipes", "outcome": "5 items"}]}'::jsonb,
         s.created_at + t * interval '1 minute', s.created_at + t * interval '1 minute' + interval '2 seconds'
  FROM grown_sessions s, generate_series(1, s.turns) t;

-- Refs spread over the turns (an agent touches a few entities a turn); one
-- in 500 retained. The last 3,000 refs of a long session are generated ones,
-- saved since (entity id set), each with its artifact.
INSERT INTO refs (id, session_id, ref, entity_type, entity_id, label, action, turn_created, turn_last_referenced,
    active_reason, created_at, updated_at)
  SELECT pg_temp.uuid7(s.created_at + ((r - 1) * s.turns / s.refs + 1) * interval '1 minute'), s.id,
         CASE WHEN s.long AND r > s.refs - 3000 THEN 'gen_recipe_' || (r - s.refs + 3000) ELSE 'recipe_' || r END,
         'recipe', gen_random_uuid(), 'Recipe number ' || r,
         CASE WHEN s.long AND r > s.refs - 3000 THEN 'created' ELSE 'read' END,
         (r - 1) * s.turns / s.refs + 1, (r - 1) * s.turns / s.refs + 1,
         CASE WHEN r % 500 = 0 THEN 'User keeps coming back to it' END,
         s.created_at + ((r - 1) * s.turns / s.refs + 1) * interval '1 minute',
         s.created_at + ((r - 1) * s.turns / s.refs + 1) * interval '1 minute'
  FROM grown_sessions s, generate_series(1, s.refs) r;

-- Three generated refs still pending in each long session.
INSERT INTO refs (id, session_id, ref, entity_type, entity_id, label, action, turn_created, turn_last_referenced,
    source_step, created_at, updated_at)
  SELECT pg_temp.uuid7(s.created_at + s.turns * interval '1 minute'), s.id, 'gen_recipe_' || (3000 + g), 'recipe', NULL,
         'Idea ' || g, 'generated', s.turns, s.turns, 3, s.created_at + s.turns * interval '1 minute', s.created_at + s.turns * interval '1 minute'
  FROM grown_sessions s, generate_series(1, 3) g WHERE s.long;
UPDATE sessions SET gen_counters = '{"recipe": 3003}'::jsonb WHERE id IN (SELECT id FROM grown_sessions WHERE long);

INSERT INTO artifacts (id, session_id, ref_id, entity_type, label, content, status, revision, created_turn,
    promoted_turn, source_step, created_at, updated_at)
  SELECT pg_temp.uuid7(r.created_at), r.session_id, r.id, 'recipe', r.label,
         '{"name": "Coconut Rice", "ingredients": ["jasmine rice", "coconut milk"], "instructions": "Simmer."}'::jsonb,
         CASE WHEN r.entity_id IS NULL THEN 'PENDING' ELSE 'CLEARED' END, 1, r.turn_created,
         CASE WHEN r.entity_id IS NULL THEN NULL ELSE r.turn_created END, 3, r.created_at, r.created_at
  FROM refs r JOIN grown_sessions s ON s.id = r.session_id
  WHERE s.long AND r.ref LIKE 'gen\_recipe\_%';

INSERT INTO step_results (id, session_id, turn, step, kind, description, data, refs, item_count, created_at, updated_at)
  SELECT pg_temp.uuid7(s.created_at + t * interval '1 minute'), s.id, t, 1, 'READ', 'Read recipes',
         '[{"id": "recipe_1", "name": "Butter Chicken"}]'::jsonb, '["recipe_1"]'::jsonb, 1,
         s.created_at + t * interval '1 minute', s.created_at + t * interval '1 minute'
  FROM grown_sessions s, generate_series(1, s.turns) t WHERE s.long;

INSERT INTO context_receipts (id, session_id, turn, node, event_sequence, budget, tokenizer, token_count, sections,
    tiers, truncated_turns, notes, text, text_sha256, created_at)
  SELECT pg_temp.uuid7(s.created_at + t * interval '1 minute'), s.id, t, 'THINK', t * 2, 8000, 'cl100k_base', 1200,
         '[]'::jsonb, '{}'::jsonb, 0, '[]'::jsonb, NULL, md5(t::text), s.created_at + t * interval '1 minute'
  FROM grown_sessions s, generate_series(s.turns - 1999, s.turns) t WHERE s.long;

INSERT INTO events (id, session_id, sequence, tenant, kind, payload, created_at, xid)
  SELECT pg_temp.uuid7(s.created_at + e * interval '20 seconds'), s.id, e, s.tenant,
         CASE WHEN e = 1 THEN 'session.opened' WHEN e % 2 = 0 THEN 'turn.began' ELSE 'turn.ended' END,
         '{}'::jsonb, s.created_at + e * interval '20 seconds', txid_current()
  FROM grown_sessions s, generate_series(1, s.events) e;

DROP TABLE grown_sessions;
