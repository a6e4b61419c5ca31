"""How the dataclasses of types.py become GraphQL selections and back:
snake_case fields to the schema's camelCase names, a selection set per
class, JSON answers decoded into the classes, inputs encoded to JSON."""

from __future__ import annotations

import dataclasses
import sys
import typing
from typing import Any, Dict, List, Union


def camel(name: str) -> str:
    """snake_case to the schema's camelCase: session_id -> sessionID, entity_ids -> entityIDs."""
    parts = name.split("_")
    special = {"id": "ID", "ids": "IDs"}
    return parts[0] + "".join(special.get(p) or p[:1].upper() + p[1:] for p in parts[1:])


_hints_cache: Dict[type, Dict[str, Any]] = {}


def hints(cls: type) -> Dict[str, Any]:
    """The resolved type hints of a dataclass's fields, in order."""
    h = _hints_cache.get(cls)
    if h is None:
        allh = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
        h = {f.name: allh[f.name] for f in dataclasses.fields(cls)}
        _hints_cache[cls] = h
    return h


def unwrap(tp: Any) -> tuple:
    """(whether tp is Optional, the type inside): Optional[List[Ref]] -> (True, List[Ref])."""
    optional = False
    if typing.get_origin(tp) is Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        tp = args[0] if len(args) == 1 else Any
    return optional, tp


def inner_type(tp: Any) -> Any:
    """The element type under Optional and List: Optional[List[Ref]] -> Ref."""
    _, tp = unwrap(tp)
    while typing.get_origin(tp) in (list, List):
        _, tp = unwrap(typing.get_args(tp)[0])
    return tp


def selection(cls: type) -> str:
    """The GraphQL selection set of a dataclass: '{ id ref label }'."""
    parts = []
    for name, tp in hints(cls).items():
        inner = inner_type(tp)
        sub = " " + selection(inner) if dataclasses.is_dataclass(inner) else ""
        parts.append(camel(name) + sub)
    return "{ " + " ".join(parts) + " }"


def decode(tp: Any, value: Any) -> Any:
    """A JSON value as the Python type tp (dataclasses built recursively)."""
    if value is None:
        return None
    _, tp = unwrap(tp)
    if typing.get_origin(tp) in (list, List):
        (item,) = typing.get_args(tp)
        return [decode(item, v) for v in value]
    if dataclasses.is_dataclass(tp):
        return tp(**{n: decode(t, value.get(camel(n))) for n, t in hints(tp).items()})
    return value


def encode(value: Any) -> Any:
    """An input value as JSON: dataclasses to camelCase objects without their None fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {camel(f.name): encode(getattr(value, f.name))
                for f in dataclasses.fields(value) if getattr(value, f.name) is not None}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value
