"""An agent loop with sessiongraph: read -> generate -> save -> context.

Two turns of a kitchen assistant. The runtime owns the database (here a dict)
and the LLM (here `llm`, a stand-in that answers from the prompt it is given);
sessiongraph keeps the session's memory: refs instead of UUIDs, the generated
plan until it is saved, and each pipeline node's prompt context.

    SG_URL=http://127.0.0.1:8080 SG_API_KEY=sg_... python3 examples/agent_loop.py
"""
import sys
import uuid

from sessiongraph import Client, ContextOptions

DB = {"recipes": [
    {"id": str(uuid.uuid4()), "name": "Dal Tadka", "cuisine": "indian", "minutes": 40},
    {"id": str(uuid.uuid4()), "name": "Chana Masala", "cuisine": "indian", "minutes": 35},
], "meal_plans": []}


def llm(prompt: str, answer: str) -> str:
    """Your model call, given the prompt sessiongraph built; here it answers what it is told."""
    return answer


def main() -> None:
    sg = Client()  # the server's URL and an API key: SG_URL, SG_API_KEY
    session = sg.open_session("acme", sys.argv[1] if len(sys.argv) > 1 else "kitchen-demo").session

    # Turn 1: read recipes, generate a plan (not saved yet).
    with sg.turn(session, "Plan an Indian dinner for Monday") as turn:
        think = turn.context("THINK")                      # Think decides what to read
        rows = [r for r in DB["recipes"] if r["cuisine"] == "indian"]
        read = turn.record_read(table="recipes", records=rows, step=1)
        print("the LLM sees:", read.records)                # ids are refs: recipe_1, recipe_2
        plan = {"date": "2026-01-12", "meal_type": "dinner", "recipe_id": read.refs[0].ref}
        gen = turn.record_generated("meal_plan", plan, step=2)
        print("generated:", gen.ref.ref, gen.ref.label)     # gen_meal_plan_1, pending
        reply = turn.context("REPLY", ContextOptions(token_budget=4000))
        turn.assistant_message = llm(reply.text, f"How about {rows[0]['name']} on Monday? Shall I save it?")
        turn.summary = {"decision": "plan", "steps": [{"step": 1, "kind": "READ", "refs": [r.ref for r in read.refs]},
                                                     {"step": 2, "kind": "GENERATE", "refs": [gen.ref.ref]}]}
    print("turn", turn.result.number, turn.result.status, "think budget", think.budget)

    # Turn 2: save the generated plan; the ACT context shows what was just saved.
    with sg.turn(session, "Yes, save it") as turn:
        pending = turn.context("THINK").tiers.generated     # ['gen_meal_plan_1']
        saved = turn.translate_payload("meal_plan", turn.read_refs(pending).records[0])  # id: gen_meal_plan_1
        row = dict(saved.data, id=str(uuid.uuid4()))        # refs became UUIDs: a row the database takes
        DB["meal_plans"].append(row)
        created = turn.record_created("meal_plan", row["id"], gen_ref=saved.saves, step=1)
        act = turn.context("ACT")
        print("saved:", created.ref.ref, "promoted" if created.promoted else "new",
              "| ACT sections:", [s.name for s in act.sections])
        turn.assistant_message = llm(act.text, "Saved: Dal Tadka for Monday dinner.")
    print("turn", turn.result.number, turn.result.status)

    messages = sg.context(session, "MESSAGES", ContextOptions(model_limit=8000)).messages
    print("chat messages:", [(m.role, m.content) for m in messages])


if __name__ == "__main__":
    main()
