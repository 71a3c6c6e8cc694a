"""Tuple trees: a Python AST as hashable nested tuples, and the walks and edits the compressor needs.

A tree is ``("N", type, children)`` (an AST node), ``("L", items)`` (a list field), ``("C", value)`` (a
constant field) or ``("H", index)`` (a hole of a template). ``Block`` is a synthetic node: consecutive
statements of one body."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from typing import Any

T = tuple  # a tuple tree: ("N", type, children) | ("L", items) | ("C", value) | ("H", index)
_CTX = {"Load", "Store", "Del"}
_EXPR_TYPES = {c.__name__ for c in ast.expr.__subclasses__()}
_STMT_TYPES = {c.__name__ for c in ast.stmt.__subclasses__()}
_BUILTINS = set(dir(builtins))
_FIELDS: dict[str, tuple[str, ...]] = {"Block": ("body",)}
_BLOCK = "Block"  # a synthetic node: consecutive statements of one body, ("N", "Block", (("L", stmts),))
_SCOPES = {"ListComp", "SetComp", "DictComp", "GeneratorExp", "Lambda"}
_LOOPS = {"For", "AsyncFor", "While"}


def to_tuple(node: Any) -> T:
    if isinstance(node, ast.AST):
        name = type(node).__name__
        _FIELDS.setdefault(name, type(node)._fields)
        return ("N", name, tuple(to_tuple(getattr(node, f, None)) for f in type(node)._fields))
    if isinstance(node, list):
        return ("L", tuple(to_tuple(x) for x in node))
    return ("C", node)


def from_tuple(t: T, hole_names: dict[int, str]) -> Any:
    kind = t[0]
    if kind == "H":
        return ast.Name(id=hole_names[t[1]], ctx=ast.Load())
    if kind == "C":
        return t[1]
    if kind == "L":
        return [from_tuple(x, hole_names) for x in t[1]]
    cls = getattr(ast, t[1])
    return cls(**{f: from_tuple(c, hole_names) for f, c in zip(_FIELDS[t[1]], t[2], strict=True)})


def size(t: T) -> int:
    """Number of AST nodes (expression contexts excluded; a hole counts 1)."""
    kind = t[0]
    if kind == "H":
        return 1
    if kind == "L":
        return sum(size(x) for x in t[1])
    if kind == "N":
        return (0 if t[1] in _CTX or t[1] == _BLOCK else 1) + sum(size(c) for c in t[2])
    return 0


def _field(t: T, name: str) -> T:
    return t[2][_FIELDS[t[1]].index(name)]


def _is_name(t: T) -> bool:
    return t[0] == "N" and t[1] == "Name"


def _name_id(t: T) -> str:
    return _field(t, "id")[1]


def _ctx(t: T) -> str | None:
    if t[0] == "N" and "ctx" in _FIELDS.get(t[1], ()):
        return _field(t, "ctx")[1]
    return None


def _walk(t: T) -> Iterator[T]:
    yield t
    if t[0] == "N":
        for c in t[2]:
            yield from _walk(c)
    elif t[0] == "L":
        for c in t[1]:
            yield from _walk(c)


def _names(t: T) -> Iterator[tuple[str, str]]:
    """(id, ctx) of every Name in ``t``."""
    for n in _walk(t):
        if _is_name(n):
            yield _name_id(n), _ctx(n) or "Load"


def _eval_order(t: T) -> Iterator[T]:
    """Children in (roughly) evaluation order, so a name read before it is assigned counts as free."""
    for _, child in _eval_children(t):
        yield child


def _eval_children(t: T) -> Iterator[tuple[int, T]]:
    """(index, child) in (roughly) evaluation order."""
    if t[0] == "L":
        yield from enumerate(t[1])
        return
    if t[0] != "N":
        return
    kind, names = t[1], _FIELDS[t[1]]
    fields = dict(zip(names, t[2], strict=True))
    if kind in {"Assign", "AnnAssign"}:
        order = ["value", "targets", "target", "annotation"]
    elif kind in {"For", "AsyncFor"}:
        order = ["iter", "target", "body", "orelse"]
    elif kind in {"ListComp", "SetComp", "GeneratorExp"}:
        order = ["generators", "elt"]
    elif kind == "DictComp":
        order = ["generators", "key", "value"]
    elif kind == "comprehension":
        order = ["iter", "target", "ifs"]
    else:
        order = list(fields)
    for name in order:
        if name in fields:
            yield names.index(name), fields[name]


def _rename(t: T, mapping: dict[str, str]) -> T:
    if t[0] == "N":
        kind = t[1]
        children = [_rename(c, mapping) for c in t[2]]
        fields = _FIELDS[kind]
        if kind == "Name":
            i = fields.index("id")
            children[i] = ("C", mapping.get(t[2][i][1], t[2][i][1]))
        elif kind == "arg":
            i = fields.index("arg")
            children[i] = ("C", mapping.get(t[2][i][1], t[2][i][1]))
        elif kind in {"FunctionDef", "AsyncFunctionDef", "ClassDef"}:
            i = fields.index("name")
            children[i] = ("C", mapping.get(t[2][i][1], t[2][i][1]))
        return ("N", kind, tuple(children))
    if t[0] == "L":
        return ("L", tuple(_rename(c, mapping) for c in t[1]))
    return t


def _children_with_index(t: T) -> Iterator[tuple[int, T]]:
    items = t[2] if t[0] == "N" else t[1] if t[0] == "L" else ()
    yield from enumerate(items)


def _subtrees(t: T, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], T]]:
    if t[0] == "N" and (t[1] in _EXPR_TYPES or t[1] in _STMT_TYPES):
        yield path, t
    for i, c in _children_with_index(t):
        if c[0] in {"N", "L"}:
            yield from _subtrees(c, (*path, i))


def _replace_at(t: T, path: tuple[int, ...], new: T) -> T:
    if not path:
        return new
    i, rest = path[0], path[1:]
    if t[0] == "N":
        kids = list(t[2])
        kids[i] = _replace_at(kids[i], rest, new)
        return ("N", t[1], tuple(kids))
    kids = list(t[1])
    kids[i] = _replace_at(kids[i], rest, new)
    return ("L", tuple(kids))


def _replace_span(t: T, path: tuple[int, ...], width: int, new: T) -> T:
    """Replace ``width`` siblings starting at ``path`` (inside a list) by ``new``."""
    i, rest = path[0], path[1:]
    if not rest:
        items = list(t[1])
        items[i : i + width] = [new]
        return ("L", tuple(items))
    kids = list(t[2] if t[0] == "N" else t[1])
    kids[i] = _replace_span(kids[i], rest, width, new)
    return ("N", t[1], tuple(kids)) if t[0] == "N" else ("L", tuple(kids))


def _lookup(t: T, path: tuple[int, ...]) -> T:
    for i in path:
        t = t[2][i] if t[0] == "N" else t[1][i]
    return t
