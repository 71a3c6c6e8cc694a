"""Templates: alpha normalization (names bound inside a subtree become ``_v0, _v1, ...``),
anti-unification of two subtrees into a template with holes, and matching a template against a
subtree."""

from __future__ import annotations

from atlas.memory.stitch.trees import (
    _EXPR_TYPES,
    _SCOPES,
    T,
    _ctx,
    _eval_order,
    _field,
    _is_name,
    _name_id,
    _names,
    _rename,
)


class _Fail(Exception):
    """Anti-unification failed below a position that cannot become a hole."""


def _bound_names(t: T) -> list[str]:
    """Names bound inside ``t`` (assigned before any read, loop/comprehension targets, args, defs)."""
    loaded: set[str] = set()
    bound: list[str] = []

    def visit(n: T) -> None:
        if n[0] == "N":
            kind = n[1]
            if kind == "Name":
                ident, ctx = _name_id(n), _ctx(n)
                if ctx in {"Store", "Del"}:
                    if ident not in loaded and ident not in bound:
                        bound.append(ident)
                elif ident not in bound:
                    loaded.add(ident)
                return
            if kind == "AugAssign":  # x += 1 reads x first
                target = _field(n, "target")
                if _is_name(target) and _name_id(target) not in bound:
                    loaded.add(_name_id(target))
            if kind == "arg":
                ident = _field(n, "arg")[1]
                if ident not in bound:
                    bound.append(ident)
            if kind in {"FunctionDef", "AsyncFunctionDef", "ClassDef"}:
                ident = _field(n, "name")[1]
                if ident not in bound:
                    bound.append(ident)
        for c in _eval_order(n):
            visit(c)

    visit(t)
    return bound


def normalize(t: T) -> tuple[T, dict[str, str]]:
    """Alpha-normalize: bound names → ``_v{i}``; returns the tree and canonical → original names."""
    bound = _bound_names(t)
    if not bound:
        return t, {}
    mapping = {name: f"_v{i}" for i, name in enumerate(bound)}
    return _rename(t, mapping), {v: k for k, v in mapping.items()}


def _stored_names(t: T) -> list[str]:
    """Names a statement or block assigns in its own scope (not inside comprehensions or lambdas)."""
    out: list[str] = []

    def visit(n: T) -> None:
        if n[0] == "N":
            if n[1] in _SCOPES:
                return
            if n[1] == "Name" and _ctx(n) in {"Store", "Del"} and _name_id(n) not in out:
                out.append(_name_id(n))
            for c in n[2]:
                visit(c)
        elif n[0] == "L":
            for c in n[1]:
                visit(c)

    visit(t)
    return out


def normalize_block(t: T) -> tuple[T, dict[str, str], list[str]]:
    """Alpha-normalize a block: names bound in it *and* names it assigns after reading them become
    ``_v{i}``. Returns the tree, canonical → original names, and the canonical names read first."""
    bound = _bound_names(t)
    read_first = [n for n in _stored_names(t) if n not in bound]
    mapping = {name: f"_v{i}" for i, name in enumerate([*bound, *read_first])}
    return _rename(t, mapping), {v: k for k, v in mapping.items()}, [mapping[n] for n in read_first]


def _has_bound(t: T) -> bool:
    return any(ident.startswith("_v") and ident[2:].isdigit() for ident, _ in _names(t))


def _holeable(t: T) -> bool:
    return t[0] == "N" and t[1] in _EXPR_TYPES and _ctx(t) not in {"Store", "Del"} and not _has_bound(t)


def anti_unify(a: T, b: T) -> tuple[T, int] | None:
    """The most specific template generalizing ``a`` and ``b`` (holes numbered in pre-order), or None."""
    holes: dict[tuple[T, T], int] = {}

    def au(x: T, y: T) -> T:
        if x == y:
            return x
        if x[0] == "N" and y[0] == "N" and x[1] == y[1] and len(x[2]) == len(y[2]):
            try:
                return ("N", x[1], tuple(au(p, q) for p, q in zip(x[2], y[2], strict=True)))
            except _Fail:
                pass
        elif x[0] == "L" and y[0] == "L" and len(x[1]) == len(y[1]):
            return ("L", tuple(au(p, q) for p, q in zip(x[1], y[1], strict=True)))
        if _holeable(x) and _holeable(y):
            key = (x, y)
            if key not in holes:
                holes[key] = len(holes)
            return ("H", holes[key])
        raise _Fail

    try:
        template = au(a, b)
    except _Fail:
        return None
    if template[0] == "H":
        return None
    return canonical_holes(template), len(holes)


def canonical_holes(t: T) -> T:
    """Renumber holes by first appearance in pre-order so equal templates compare equal."""
    order: dict[int, int] = {}

    def go(x: T) -> T:
        if x[0] == "H":
            return ("H", order.setdefault(x[1], len(order)))
        if x[0] == "N":
            return ("N", x[1], tuple(go(c) for c in x[2]))
        if x[0] == "L":
            return ("L", tuple(go(c) for c in x[1]))
        return x

    return go(t)


def match(template: T, t: T, binds: dict[int, T]) -> bool:
    """Does ``t`` (normalized) instantiate ``template``? Fills ``binds`` (hole → subtree)."""
    if template[0] == "H":
        bound = binds.get(template[1])
        if bound is not None:
            return bound == t
        if not _holeable(t):
            return False
        binds[template[1]] = t
        return True
    if template[0] != t[0]:
        return False
    if template[0] == "N":
        if template[1] != t[1] or len(template[2]) != len(t[2]):
            return False
        return all(match(p, q, binds) for p, q in zip(template[2], t[2], strict=True))
    if template[0] == "L":
        if len(template[1]) != len(t[1]):
            return False
        return all(match(p, q, binds) for p, q in zip(template[1], t[1], strict=True))
    return template == t
