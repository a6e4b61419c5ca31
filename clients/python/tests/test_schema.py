"""The client's dataclasses and operations against graph/schema/*.graphql:
a field renamed or removed on either side fails here."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

import sdl
from sessiongraph import codec, ops, types

SCHEMA = sdl.load()

SCALARS = {"String": str, "ID": str, "UUID": str, "Time": str, "Cursor": str, "Int": int,
           "Boolean": bool, "Float": float, "Map": dict, "StringMap": dict, "JSON": Any}


def mismatch(py: Any, gql: str, where: str) -> str:
    """Why the Python type py cannot hold GraphQL type gql ('' when it can)."""
    optional, inner = codec.unwrap(py)
    nullable = not gql.endswith("!")
    base = gql.rstrip("!")
    if inner is Any and (base == "JSON" or base.startswith("[")) and optional == nullable:
        return ""
    if optional != nullable:
        return f"{where}: {py} is {'' if optional else 'not '}Optional but {gql} is {'' if nullable else 'not '}nullable"
    if base.startswith("["):
        if typing.get_origin(inner) not in (list, typing.List):
            return f"{where}: {py} is not a list, {gql} is"
        return mismatch(typing.get_args(inner)[0], base[1:-1], where + "[]")
    if dataclasses.is_dataclass(inner):
        return "" if inner.__gql__ == base else f"{where}: {inner.__name__} stands for {inner.__gql__}, not {base}"
    if base in SCHEMA.enums:
        return "" if inner is str else f"{where}: enum {base} should be str, not {py}"
    want = SCALARS.get(base)
    if want is None:
        return f"{where}: {base} is neither a scalar, an enum nor a dataclass"
    got = typing.get_origin(inner) or inner
    if want is Any or got is want or (want is dict and got is dict):
        return ""
    return f"{where}: {base} should be {want}, not {py}"


@pytest.mark.parametrize("cls", types.OUTPUT_TYPES, ids=lambda c: c.__gql__)
def test_output_types_match_schema(cls):
    fields = SCHEMA.objects.get(cls.__gql__)
    assert fields is not None, f"type {cls.__gql__} is not in the schema"
    problems = []
    for name, hint in codec.hints(cls).items():
        f = fields.get(codec.camel(name))
        if f is None:
            problems.append(f"{cls.__gql__}.{codec.camel(name)} is not in the schema")
        else:
            problems.append(mismatch(hint, f.type, f"{cls.__gql__}.{codec.camel(name)}"))
    assert not [p for p in problems if p]


@pytest.mark.parametrize("cls", types.INPUT_TYPES, ids=lambda c: c.__gql__)
def test_input_types_match_schema(cls):
    fields = SCHEMA.inputs.get(cls.__gql__)
    assert fields is not None, f"input {cls.__gql__} is not in the schema"
    ours = {codec.camel(f.name): f for f in dataclasses.fields(cls)}
    hints = codec.hints(cls)
    problems = [f"{cls.__gql__}.{n} is not in the schema" for n in ours if n not in fields]
    for name, f in fields.items():
        required = f.type.endswith("!") and not f.has_default
        mine = ours.get(name)
        if mine is None:
            problems.append(f"{cls.__gql__}.{name} is missing from {cls.__name__}")
            continue
        if required and mine.default is not dataclasses.MISSING:
            problems.append(f"{cls.__gql__}.{name} is required but has a default")
        # An input field may be left out (None) whenever the schema does not require it.
        py = hints[mine.name]
        if not required:
            py = typing.Optional[py]
        problems.append(mismatch(py, f.type if required else f.type.rstrip("!"), f"{cls.__gql__}.{name}"))
    assert not [p for p in problems if p]


@pytest.mark.parametrize("spec", ops.SPECS, ids=lambda s: s.field)
def test_operations_match_schema(spec):
    parent = {"mutation": "Mutation", "query": "Query", "session": "Session", "subscription": "Subscription"}[spec.kind]
    f = SCHEMA.objects[parent].get(spec.field)
    assert f is not None, f"{parent}.{spec.field} is not in the schema"
    assert {a: x.type for a, x in f.args.items() if not x.has_default or a in spec.args} == spec.args
    if spec.kind == "mutation":
        inp = SCHEMA.inputs[spec.args["input"].rstrip("!")]
        unknown = [p for p in spec.params if p not in inp]
        assert not unknown, f"{spec.field}: {unknown} are not fields of its input"
        needed = [n for n, x in inp.items() if x.type.endswith("!") and not x.has_default]
        assert sorted(n for n in needed if not spec.params.get(n)) == [], f"{spec.field}: required fields not required"
        assert sorted(spec.params) == sorted(inp), f"{spec.field}: input fields the client cannot send: {set(inp) - set(spec.params)}"
    # A subscription's items, and a query's nullable answer, may be None.
    result = f.type if spec.kind != "subscription" else f.type.rstrip("!")
    assert not mismatch(spec.result if spec.kind != "subscription" else typing.Optional[spec.result], result, spec.field)


def test_every_mutation_of_the_agent_loop_is_declared():
    declared = {s.field for s in ops.SPECS if s.kind == "mutation"}
    loop = {"openSession", "beginTurn", "endTurn", "failTurn", "updateTurn", "recordRead", "recordUpdated",
            "recordGenerated", "recordCreated", "recordDeleted", "recordUserAction", "recordStepResult",
            "mentionEntity", "retainRef", "releaseRef", "updateArtifact", "clearArtifact", "applyEnrichment"}
    assert loop <= declared, loop - declared
    assert loop <= set(SCHEMA.objects["Mutation"])


def test_a_renamed_field_is_caught():
    """The checker itself: a field the schema lacks, or a wrong nullability, is reported."""

    @dataclasses.dataclass
    class Renamed:
        __gql__ = "Ref"
        entity_uuid: str
        label: typing.Optional[str]

    fields = SCHEMA.objects["Ref"]
    assert "entityUuid" not in fields
    assert mismatch(codec.hints(Renamed)["label"], fields["label"].type, "Ref.label")
    assert not mismatch(str, fields["label"].type, "Ref.label")
