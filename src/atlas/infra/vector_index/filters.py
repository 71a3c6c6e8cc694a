"""``where`` filters, one meaning on every backend: validation and rewriting into Chroma's strict form
(``_normalize_where``), the reference matcher (``matches_where``) and a compiled predicate for the
in-memory store (``_compile``, same answers, far fewer steps)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from atlas.errors import InvalidInputError

_SCALAR = (str, int, float, bool)
_COMPARE_OPS = {"$gt", "$gte", "$lt", "$lte"}
_VALUE_OPS = {"$eq", "$ne", "$in", "$nin"} | _COMPARE_OPS


def _check_operand(op: str, value: Any) -> None:
    if op in {"$in", "$nin"}:
        if not isinstance(value, list | tuple) or not value or any(not isinstance(v, _SCALAR) for v in value):
            raise InvalidInputError(f"{op} needs a non-empty list of str/int/float/bool, got {value!r}")
    elif op in _COMPARE_OPS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInputError(f"{op} needs a number, got {value!r}")
    elif not isinstance(value, _SCALAR):
        raise InvalidInputError(f"{op} needs a str/int/float/bool operand, got {value!r}")


def _normalize_where(where: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a where-filter and rewrite it into Chroma's strict form (one operator per dict,
    ``$and``/``$or`` with at least two clauses, explicit ``$eq``)."""
    if not isinstance(where, Mapping) or not where:
        raise InvalidInputError(f"where must be a non-empty dict, got {where!r}")
    clauses: list[dict[str, Any]] = []
    for key, cond in where.items():
        if key in {"$and", "$or"}:
            if not isinstance(cond, list | tuple) or not cond:
                raise InvalidInputError(f"{key} needs a non-empty list of filters")
            subs = [_normalize_where(c) for c in cond]
            clauses.append(subs[0] if len(subs) == 1 else {key: subs})
        elif key.startswith("$"):
            raise InvalidInputError(f"unknown where operator {key!r}")
        elif isinstance(cond, Mapping):
            if len(cond) != 1:
                raise InvalidInputError(
                    f"filter on {key!r} must have exactly one operator, got {dict(cond)!r}"
                )
            ((op, value),) = cond.items()
            if op not in _VALUE_OPS:
                raise InvalidInputError(f"unknown operator {op!r} on {key!r}")
            _check_operand(op, value)
            clauses.append({key: {op: list(value) if isinstance(value, tuple) else value}})
        else:
            _check_operand("$eq", cond)
            clauses.append({key: {"$eq": cond}})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _same(a: Any, b: Any) -> bool:
    """Equality as Chroma sees it: bools only equal bools; ints and floats compare numerically."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return False


def _match(meta: Mapping[str, Any], where: Mapping[str, Any]) -> bool:
    ((key, cond),) = where.items()
    if key == "$and":
        return all(_match(meta, c) for c in cond)
    if key == "$or":
        return any(_match(meta, c) for c in cond)
    ((op, operand),) = cond.items()
    present = key in meta
    value = meta.get(key)
    if op == "$eq":
        return present and _same(value, operand)
    if op == "$ne":
        return not (present and _same(value, operand))
    if op == "$in":
        return present and any(_same(value, o) for o in operand)
    if op == "$nin":
        return not (present and any(_same(value, o) for o in operand))
    if not present or isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return {
        "$gt": value > operand,
        "$gte": value >= operand,
        "$lt": value < operand,
        "$lte": value <= operand,
    }[op]


_MISSING = object()


def _eq_pred(key: str, operand: Any) -> Callable[[Mapping[str, Any]], bool]:
    """A fast equality test with ``_same`` semantics, specialised on the operand's type."""
    if isinstance(operand, bool):
        return lambda m: m.get(key, _MISSING) is operand
    if isinstance(operand, str):
        return lambda m: m.get(key, _MISSING) == operand and type(m.get(key)) is str

    def num(m: Mapping[str, Any]) -> bool:
        v = m.get(key, _MISSING)
        return type(v) in (int, float) and v == operand

    return num


def _compile(clause: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """Turn a normalized filter into a predicate (same answers as ``_match``, far fewer steps)."""
    ((key, cond),) = clause.items()
    if key in {"$and", "$or"}:
        preds = [_compile(c) for c in cond]
        if key == "$and":
            return lambda m: all(p(m) for p in preds)
        return lambda m: any(p(m) for p in preds)
    ((op, operand),) = cond.items()
    if op == "$eq":
        return _eq_pred(key, operand)
    if op == "$ne":
        eq = _eq_pred(key, operand)
        return lambda m: not eq(m)
    if op in {"$in", "$nin"}:
        eqs = [_eq_pred(key, o) for o in operand]
        if op == "$in":
            return lambda m: any(e(m) for e in eqs)
        return lambda m: not any(e(m) for e in eqs)
    return lambda m: _match(m, clause)


def matches_where(metadata: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """True when ``metadata`` passes the filter ``where`` (the semantics of both backends)."""
    return True if not where else _match(metadata, _normalize_where(where))
