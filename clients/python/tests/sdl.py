"""A small reader of the server's SDL (graph/schema/*.graphql): enough to
check the client's dataclasses and operations against it."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

SCHEMA_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "graph", "schema")


@dataclass
class Field:
    type: str                                  # as written: [String!]!
    args: Dict[str, "Field"] = field(default_factory=dict)
    has_default: bool = False


@dataclass
class Schema:
    objects: Dict[str, Dict[str, Field]] = field(default_factory=dict)   # types and interfaces
    inputs: Dict[str, Dict[str, Field]] = field(default_factory=dict)
    enums: Dict[str, List[str]] = field(default_factory=dict)
    scalars: List[str] = field(default_factory=lambda: ["String", "Int", "Float", "Boolean", "ID"])


_TOKEN = re.compile(r'\.\.\.|[A-Za-z_]\w*|-?\d+(?:\.\d+)?|[!\[\](){}:=@,&|$]')


def _tokens(text: str) -> List[str]:
    text = re.sub(r'"""[\s\S]*?"""', " ", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', ' "" ', text)
    text = re.sub(r"#[^\n]*", " ", text)
    return [t for t in re.findall(r'""|' + _TOKEN.pattern, text) if t != ","]


class _Parser:
    def __init__(self, toks: List[str]):
        self.t, self.i = toks, 0

    def peek(self) -> Optional[str]:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want: Optional[str] = None) -> str:
        tok = self.t[self.i]
        if want is not None and tok != want:
            raise SyntaxError(f"expected {want!r}, got {tok!r} near {' '.join(self.t[self.i - 5:self.i + 5])}")
        self.i += 1
        return tok

    def type_ref(self) -> str:
        if self.peek() == "[":
            self.take("[")
            inner = self.type_ref()
            self.take("]")
            out = f"[{inner}]"
        else:
            out = self.take()
        if self.peek() == "!":
            self.take()
            out += "!"
        return out

    def value(self) -> None:
        tok = self.take()
        if tok == "{":
            while self.peek() != "}":
                self.take()
                self.take(":")
                self.value()
            self.take("}")
        elif tok == "[":
            while self.peek() != "]":
                self.value()
            self.take("]")

    def directives(self) -> None:
        while self.peek() == "@":
            self.take("@")
            self.take()
            if self.peek() == "(":
                self.take("(")
                while self.peek() != ")":
                    self.take()
                    self.take(":")
                    self.value()
                self.take(")")

    def fields(self, close: str) -> Dict[str, Field]:
        out: Dict[str, Field] = {}
        while self.peek() != close:
            if self.peek() == '""':
                self.take()
                continue
            name = self.take()
            args = self.fields(")") if self.peek() == "(" and self.take("(") else {}
            if args:
                self.take(")")
            elif self.t[self.i - 1] == "(":
                self.take(")")
            self.take(":")
            f = Field(self.type_ref(), args)
            if self.peek() == "=":
                self.take("=")
                self.value()
                f.has_default = True
            self.directives()
            out[name] = f
        return out

    def parse(self, schema: Schema) -> None:
        while self.peek() is not None:
            tok = self.take()
            if tok == '""':
                continue
            if tok == "extend":
                tok = self.take()
            if tok in ("type", "interface", "input"):
                name = self.take()
                if self.peek() == "implements":
                    self.take()
                    self.take()
                    while self.peek() == "&":
                        self.take()
                        self.take()
                self.directives()
                body: Dict[str, Field] = {}
                if self.peek() == "{":
                    self.take("{")
                    body = self.fields("}")
                    self.take("}")
                target = schema.inputs if tok == "input" else schema.objects
                target.setdefault(name, {}).update(body)
            elif tok == "enum":
                name = self.take()
                self.directives()
                values: List[str] = []
                if self.peek() == "{":
                    self.take("{")
                    while self.peek() != "}":
                        v = self.take()
                        if v != '""':
                            values.append(v)
                            self.directives()
                    self.take("}")
                schema.enums.setdefault(name, []).extend(values)
            elif tok == "scalar":
                schema.scalars.append(self.take())
                self.directives()
            elif tok == "directive":
                self.take("@")
                self.take()
                if self.peek() == "(":
                    self.take("(")
                    self.fields(")")
                    self.take(")")
                self.take("on")
                self.take()
                while self.peek() == "|":
                    self.take()
                    self.take()
            elif tok == "union":
                self.take()
                self.take("=")
                self.take()
                while self.peek() == "|":
                    self.take()
                    self.take()
            else:
                raise SyntaxError(f"unexpected {tok!r}")


def load(directory: str = SCHEMA_DIR) -> Schema:
    schema = Schema()
    files = sorted(glob.glob(os.path.join(directory, "*.graphql")))
    if not files:
        raise FileNotFoundError(f"no schema files in {directory}")
    for path in files:
        with open(path, encoding="utf-8") as f:
            _Parser(_tokens(f.read())).parse(schema)
    return schema
