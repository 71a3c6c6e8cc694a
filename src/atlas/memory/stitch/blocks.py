"""What a call can replace: an expression or a self-contained statement (``_root_ok``), or a block of
consecutive statements whose assigned names the rest of the program reads (liveness:
``_live_after``, ``_definitely_assigned``), and the call statement that replaces a block."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from atlas.memory.stitch.templates import _bound_names, _stored_names
from atlas.memory.stitch.trees import (
    _BLOCK,
    _EXPR_TYPES,
    _LOOPS,
    _STMT_TYPES,
    T,
    _ctx,
    _eval_children,
    _field,
    _is_name,
    _name_id,
    _names,
    _walk,
)

_COMPOUND = {"For", "AsyncFor", "While", "If", "With", "AsyncWith", "Try"}


_NEVER_INSIDE = {
    "Return",
    "Yield",
    "YieldFrom",
    "Await",
    "Break",
    "Continue",
    "Global",
    "Nonlocal",
    "NamedExpr",
}


def _root_ok(t: T) -> bool:
    """Can ``t`` be the root of an abstraction that a plain function call can replace?"""
    kind = t[1]
    if kind in _EXPR_TYPES:
        if kind == "Starred" or _ctx(t) in {"Store", "Del"}:
            return False
        inner = t
    elif kind in {"Expr", "Return"}:
        inner = _field(t, "value")
        if inner[0] != "N":
            return False
    elif kind in _COMPOUND:
        if _stored_names(t):  # it assigns names the rest may read: a block handles it
            return False
        inner = t
    else:  # assignments, defs, imports ... bind names the rest of the program uses
        return False
    return not any(n[0] == "N" and n[1] in _NEVER_INSIDE for n in _walk(inner))


_NOT_IN_BLOCK = {"FunctionDef", "AsyncFunctionDef", "ClassDef", "Import", "ImportFrom", "Delete"}


def _block_stmt_ok(t: T) -> bool:
    """Can this statement sit inside a block that a call replaces?"""
    return not any(n[0] == "N" and (n[1] in _NEVER_INSIDE or n[1] in _NOT_IN_BLOCK) for n in _walk(t))


def _body_lists(t: T, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], T]]:
    """Every list of statements (a body) with its path."""
    if t[0] == "L":
        if t[1] and all(x[0] == "N" and x[1] in _STMT_TYPES for x in t[1]):
            yield path, t
        for i, c in enumerate(t[1]):
            yield from _body_lists(c, (*path, i))
    elif t[0] == "N":
        for i, c in enumerate(t[2]):
            yield from _body_lists(c, (*path, i))


def _name_events(t: T) -> list[tuple[tuple[int, ...], str, bool]]:
    """(path, name, is_read) of every name use, in (roughly) evaluation order."""
    out: list[tuple[tuple[int, ...], str, bool]] = []

    def visit(n: T, p: tuple[int, ...]) -> None:
        if n[0] == "N" and n[1] == "Name":
            out.append((p, _name_id(n), _ctx(n) == "Load"))
            return
        if n[0] == "N" and n[1] == "AugAssign" and _is_name(_field(n, "target")):
            out.append((p, _name_id(_field(n, "target")), True))  # x += 1 reads x
        for i, c in _eval_children(n):
            visit(c, (*p, i))

    visit(t, ())
    return out


def _live_after(
    tree: T, events: list[tuple[tuple[int, ...], str, bool]], body: tuple[int, ...], start: int, end: int
) -> set[str]:
    """Names whose next use after statements ``start..end-1`` of ``body`` is a read (the rest of the
    program, and for a block inside a loop also the loop's next iteration)."""
    depth = len(body)

    def inside(p: tuple[int, ...]) -> bool:
        return len(p) > depth and p[:depth] == body and start <= p[depth] < end

    idx = [i for i, ev in enumerate(events) if inside(ev[0])]
    if not idx:
        return set()
    sequences = [events[idx[-1] + 1 :]]
    node = tree
    for k in range(depth):  # enclosing loops: their next iteration reads what the block left
        if node[0] == "N" and node[1] in _LOOPS:
            loop = body[:k]
            sequences.append([ev for ev in events[: idx[0]] if ev[0][:k] == loop])
        node = node[2][body[k]] if node[0] == "N" else node[1][body[k]]
    live: set[str] = set()
    for seq in sequences:
        first: dict[str, bool] = {}
        for _, name, read in seq:
            first.setdefault(name, read)
        live |= {n for n, read in first.items() if read}
    return live


def _definitely_assigned(stmts: tuple[T, ...]) -> set[str]:
    """Names every run of the block assigns: targets of its top-level assignments."""
    out: set[str] = set()
    for st in stmts:
        if st[1] == "Assign":
            targets = list(_field(st, "targets")[1])
        elif (st[1] == "AnnAssign" and _field(st, "value")[0] == "N") or st[1] == "AugAssign":
            targets = [_field(st, "target")]
        else:
            continue
        for tg in targets:
            out |= {_name_id(n) for n in _walk(tg) if _is_name(n) and _ctx(n) == "Store"}
    return out


def _signature(t: T) -> Any:
    """What a template and the subtrees it can match share: the root type, and for a block the types
    of its statements (statements are never holes). Groups candidates and subtrees for scoring."""
    if t[1] == _BLOCK:
        return (_BLOCK, tuple(x[1] for x in t[2][0][1]))
    return t[1]


def _read_first(template: T) -> list[str]:
    """Canonical names of a block template that it reads before assigning: its in-out parameters."""
    bound = set(_bound_names(template))
    names = dict.fromkeys(n for n, _ in _names(template) if n.startswith("_v") and n[2:].isdigit())
    return sorted((n for n in names if n not in bound), key=lambda n: int(n[2:]))


def _call_stmt(name: str, args: list[Any], outputs: list[str]) -> Any:
    """``outputs = name(args)`` (or a bare call when nothing is returned) as an AST statement."""
    call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])
    if not outputs:
        return ast.Expr(value=call)
    if len(outputs) == 1:
        target: Any = ast.Name(id=outputs[0], ctx=ast.Store())
    else:
        target = ast.Tuple(elts=[ast.Name(id=o, ctx=ast.Store()) for o in outputs], ctx=ast.Store())
    return ast.Assign(targets=[target], value=call, type_comment=None)
