"""The agent loop against the real server: turns as context managers (sync
and async), the record calls, context builds and ref translation."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid

import pytest

import sessiongraph
from sessiongraph import ContextOptions, ExecutionSummaryInput, SessionGraphError, StepSummaryInput

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(n, **extra):
    return [dict({"id": str(uuid.uuid4()), "name": f"Dish {i}"}, **extra) for i in range(1, n + 1)]


def events(client, sid, last=3):
    data = client.execute("query($s: ID!, $n: Int) { session(id: $s) { events(last: $n, orderBy: [{field: SEQUENCE}])"
                          " { edges { node { kind payload } } } } }", {"s": sid, "n": last})
    return [e["node"] for e in data["session"]["events"]["edges"]]


def test_turn_ends_with_message_and_summary(client, session):
    with client.turn(session, "Find Indian recipes") as turn:
        assert turn.turn.status == "OPEN" and turn.number == 1
        read = turn.record_read(table="recipes", records=rows(2, cuisine="indian"), step=1)
        assert [r["id"] for r in read.records] == ["recipe_1", "recipe_2"]
        assert [r.entity_type for r in read.refs] == ["recipe", "recipe"] and read.enrichment_queue == []
        turn.record_step_result(1, "READ", description="Find Indian recipes")
        turn.assistant_message = "Dish 1 and Dish 2."
        turn.summary = ExecutionSummaryInput(decision="read", steps=[StepSummaryInput(step=1, kind="READ", refs=["recipe_1"])])
    assert turn.result.status == "COMPLETED" and turn.result.assistant_message == "Dish 1 and Dish 2."
    assert turn.result.execution_summary.decision == "read"
    assert turn.result.execution_summary.steps[0].refs == ["recipe_1"]
    assert client.session(session.id).current_turn == 1


def test_exception_fails_the_turn_and_propagates(client, session):
    with pytest.raises(KeyError) as err:
        with client.turn(session, "Save the plan") as turn:
            turn.record_read(entity_type="recipe", records=rows(1))
            raise KeyError("recipes table is gone")
    assert err.value.args == ("recipes table is gone",)
    assert turn.result.status == "FAILED"
    assert events(client, session.id, 1)[0] == {"kind": "turn.failed", "payload": {"reason": "'recipes table is gone'", "turn": 1}}
    # The failed turn is not part of the conversation; the next one begins.
    with client.turn(session, "again") as turn:
        turn.assistant_message = "done"
    assert turn.result.number == 2
    assert [m.content for m in client.context(session, "MESSAGES").messages] == ["again", "done"]


def test_async_turn(url, key):
    async def main():
        async with sessiongraph.AsyncClient(url, key) as c:
            s = (await c.open_session("acme", "py-async-" + uuid.uuid4().hex)).session
            async with c.turn(s, "generate a recipe") as turn:
                gen = await turn.record_generated("recipe", {"name": "Lemon Madeleine", "servings": 12}, step=1)
                turn.assistant_message = "Here is a recipe."
            with pytest.raises(ValueError):
                async with c.turn(s, "boom") as failed:
                    raise ValueError("model timed out")
            pending = (await c.active_entities(s)).generated
            return gen, turn, failed, pending

    gen, turn, failed, pending = asyncio.run(asyncio.wait_for(main(), 20))
    assert gen.ref.ref == "gen_recipe_1" and gen.ref.entity_id is None and gen.ref.label == "Lemon Madeleine"
    assert turn.result.status == "COMPLETED" and failed.result.status == "FAILED"
    assert [r.ref for r in pending] == ["gen_recipe_1"]


def test_generate_save_update_delete_and_translate(client, session):
    with client.turn(session, "plan dinner") as turn:
        read = turn.record_read(table="recipes", records=rows(2), step=1)
        recipe = read.refs[0]
        gen = turn.record_generated("meal_plan", {"date": "2026-01-12", "meal_type": "dinner", "recipe_id": recipe.ref}, step=2)
        assert gen.ref.label == "2026-01-12 dinner"
        resolved = turn.resolve_refs([recipe.ref, gen.ref.ref])
        assert resolved[0].entity_id == recipe.entity_id and resolved[1].pending and resolved[1].entity_id is None
        tf = turn.translate_filters([{"field": "id", "op": "in", "value": [recipe.ref]}], table="recipes")
        assert tf.filters[0].value == [recipe.entity_id] and tf.pending_refs == []
        tf = turn.translate_filters([sessiongraph.FilterInput("id", "in", [gen.ref.ref])], entity_type="meal_plan")
        assert tf.pending_refs == [gen.ref.ref]
        record = turn.read_refs([gen.ref.ref, recipe.ref])
        assert record.records[0]["id"] == gen.ref.ref and record.from_database == [recipe.ref]
        payload = turn.translate_payload("meal_plan", record.records[0])
        assert payload.saves == gen.ref.ref and payload.data["recipe_id"] == recipe.entity_id
        turn.update_artifact(gen.ref.ref, dict(record.records[0], meal_type="lunch"))
        new_id = str(uuid.uuid4())
        created = turn.record_created("meal_plan", new_id, gen_ref=payload.saves, step=3)
        assert created.promoted and created.ref.entity_id == new_id
        updated = turn.record_updated([dict(DB_ROW, id=recipe.entity_id)], entity_type="recipe", step=4)
        assert updated.records[0]["id"] == recipe.ref and updated.refs[0].action == "updated"
        deleted = turn.record_deleted("recipe", [read.refs[1].entity_id], step=5)
        assert deleted.refs[0].action == "deleted"
        turn.retain_ref(recipe.ref, "the user's favourite")
        turn.mention_entity([recipe.ref])
        act = turn.context("ACT")
        assert act.section("just_saved") is not None and "recipe_1" in act.text
        turn.assistant_message = "Saved."
    tiers = client.active_entities(session, turns_window=2)
    assert recipe.ref in [r.ref for r in tiers.active + tiers.retained]


DB_ROW = {"name": "Dal Tadka", "instructions": "Simmer the lentils."}


@pytest.mark.parametrize("node", ["UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES"])
def test_context_builds(client, session, node):
    client.update_session(session.id, system_prompt="You plan meals.")
    for i in range(3):
        with client.turn(session, f"question {i} " + "words " * 40) as turn:
            turn.record_read(table="recipes", records=rows(1))
            turn.assistant_message = f"answer {i} " + "more words " * 40
    build = client.context(session, node, ContextOptions(token_budget=400, model_limit=300, keep_recent=2,
                                                        strategy="SLIDING_WINDOW", tokenizer="chars4"))
    assert build.node == node and build.tokenizer == "chars4"
    if node == "MESSAGES":
        assert build.messages[0].role == "system" and build.messages[-1].content.startswith("answer 2")
        assert build.truncated_turns > 0 and build.messages[1].content.startswith("[Note:")
    else:
        assert build.sections and build.token_count <= build.budget == 400
        assert sum(s.token_count for s in build.sections) <= build.token_count + len(build.sections) * 2
        assert build.tiers.active == [] or build.tiers.active[0].startswith("recipe_")


def test_the_installed_package_runs_the_example(url, key, client, tmp_path):
    """The package comes from the wheel installed in this venv (not the
    checkout), and examples/agent_loop.py runs with it against the real
    server, its URL and key from SG_URL and SG_API_KEY."""
    assert "site-packages" in sessiongraph.__file__, sessiongraph.__file__
    ext = "py-example-" + uuid.uuid4().hex
    env = dict(os.environ, SG_URL=url, SG_API_KEY=key)
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "examples", "agent_loop.py"), ext],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "generated: gen_meal_plan_1 2026-01-12 dinner" in out.stdout
    assert "saved: gen_meal_plan_1 promoted | ACT sections: ['just_saved'" in out.stdout
    s = client.session_by_key("acme", ext)
    assert s.current_turn == 2
    refs = client.resolve_refs(s, ["gen_meal_plan_1", "recipe_1"])
    assert not refs[0].pending and refs[0].entity_id and refs[1].entity_type == "recipe"


def test_readme_opens_with_the_example():
    root = os.path.dirname(HERE)
    with open(os.path.join(root, "examples", "agent_loop.py"), encoding="utf-8") as f:
        code = f.read().split('"""', 2)[2].lstrip("\n")
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    first_python = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert first_python == code, "README.md's first code block must be examples/agent_loop.py"
    assert readme.index("pip install ./clients/python") < readme.index("```python")


def _readme_block(marker: str, lang: str) -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    rest = readme[readme.index(marker):]
    return rest.split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def test_the_repository_readmes_quick_start_runs(url, key, tmp_path):
    """The repository README's first agent turn in Python, as written, with
    the installed package and SG_URL and SG_API_KEY set."""
    script = tmp_path / "quickstart.py"
    script.write_text(_readme_block("**Python**", "python"), encoding="utf-8")
    env = dict(os.environ, SG_URL=url, SG_API_KEY=key)
    env.pop("SG_KEY", None)
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[{'id': 'recipe_1', 'name': 'Dal Tadka'}]", "['recipe_1']"]


def test_an_exchange_is_one_turn_begun_and_ended(client, session):
    turn = client.record_exchange(session, "what can I cook with leeks?", "Leek and potato soup.",
                                  summary=ExecutionSummaryInput(decision="answer")).turn
    assert (turn.number, turn.status, turn.assistant_message) == (1, "COMPLETED", "Leek and potato soup.")
    assert [e["kind"] for e in events(client, session.id, 2)] == ["turn.began", "turn.ended"]
    assert [m.content for m in client.context(session, "MESSAGES").messages] == ["what can I cook with leeks?", "Leek and potato soup."]
