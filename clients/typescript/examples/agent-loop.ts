// An agent loop (read → generate → save → context) with the TypeScript client.
// Run: SG_URL=http://127.0.0.1:8080 SG_API_KEY=sg_... node dist/examples/agent-loop.js
import { randomUUID } from 'node:crypto';
import { SessionGraphClient } from '@sessiongraph/client';

const sg = new SessionGraphClient(); // the server's URL and an API key: SG_URL, SG_API_KEY

// The runtime's own database: rows keyed by UUID, which the LLM never sees.
const recipes = [
  { id: randomUUID(), name: 'Dal Tadka', cuisine: 'Indian', total_time: 40 },
  { id: randomUUID(), name: 'Chana Masala', cuisine: 'Indian', total_time: 35 },
];
const mealPlans: Record<string, unknown>[] = [];

const { session } = await sg.openSession({ tenant: 'acme', externalKey: `chat-${randomUUID()}` });

// Turn 1: read recipes, generate a plan from them.
await sg.turn(session.id, 'Find Indian recipes and plan Monday dinner', async (turn) => {
  // Read: register the rows; the LLM sees refs (recipe_1, recipe_2), never UUIDs.
  const read = await turn.recordRead({ table: 'recipes', records: recipes, step: 1 });
  console.log('read:', JSON.stringify(read.records));
  // Generate: the LLM's plan names the recipe by its ref; it waits as gen_meal_plan_1.
  const { ref: plan } = await turn.recordGenerated({
    entityType: 'meal_plan',
    content: { date: '2026-01-12', meal_type: 'dinner', recipe_id: 'recipe_1' },
    step: 2,
  });
  console.log('generated:', plan.ref, plan.label);
  return `I planned ${plan.label} with Dal Tadka (${plan.ref}).`;
});

// Turn 2: save the plan, then build the context the LLM answers with.
const reply = await sg.turn(session.id, 'Save it', async (turn) => {
  // Save: read the generated plan, turn its refs into UUIDs, insert it, register the row.
  const { records } = await turn.readRefs(['gen_meal_plan_1']);
  const { data } = await sg.translatePayload(session.id, 'meal_plan', records[0]!);
  const row = { ...data, id: randomUUID() };
  mealPlans.push(row);
  const saved = await turn.recordCreated({ entityType: 'meal_plan', entityID: row.id, genRef: 'gen_meal_plan_1', step: 1 });
  console.log('saved:', saved.ref.ref, 'promoted:', saved.promoted, 'recipe_id:', data.recipe_id);
  // Context: what the REPLY node's prompt holds now.
  const context = await turn.context('REPLY');
  console.log(`context (${context.tokenCount}/${context.budget} tokens):\n${context.text}`);
  return 'Saved your Monday dinner plan.';
});
console.log('turn', reply.number, reply.status, '-', reply.assistantSummary);
await sg.close();
