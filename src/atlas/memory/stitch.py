"""A symbolic library-learning compressor in the spirit of Stitch (Bowers et al., 2023).

Given Python programs (the successful code found in trajectories) it finds reusable abstractions:

1. every program is parsed; each expression / statement subtree is *alpha-normalized* (names bound
   inside it become ``_v0, _v1, ...``) and turned into a hashable tuple tree;
2. pairs of subtrees with the same root type are *anti-unified*: identical parts are kept, differing
   expression positions become holes (the same pair of differing parts → the same hole); a hole may not
   capture a variable bound inside the abstraction, and differences outside expression positions
   make the pair fail;
3. each candidate template is matched against every subtree of the corpus (holes bind consistently,
   matches do not overlap); its MDL-style benefit is

       Σ_uses [ size(matched subtree) − size(the call replacing it) ]  −  size(template)

   where the call is ``Call(Name, args)`` (plus ``Expr``/``Return`` for a statement) and its size
   counts the arguments: hole bindings and free variables;

   i.e. the corpus size saved by calling the abstraction minus the cost of defining it;
4. greedily (like Stitch) the best candidate is taken, its uses in the corpus are rewritten into calls,
   and the search repeats on the rewritten corpus, so later abstractions may build on earlier ones.

Besides expressions and self-contained statements, *blocks* of 1–``max_block`` (default 2)
consecutive statements are candidates (loops, accumulators: ``total = 0; for x in xs: total = total +
x * 3``). Every name a block assigns is renamed canonically; a name it reads before assigning
(``total`` in a loop without its initializer) is passed in, and a name it assigns that the rest of
the program reads afterwards is returned, so a use is rewritten as ``total = fn(0, xs, 3)``. A block
whose later-read name might be left unassigned (assigned only inside a branch or a loop and not
passed in) is not a candidate. The same MDL score decides between blocks, statements and
expressions. Blocks cost search time (about 1.7x on loop-heavy code at width 2, 4-5x at width 3);
``max_block=0`` turns them off.

Each chosen abstraction becomes a Python function: holes and free variables are its parameters, an
expression template is returned, a statement template is the body. Its source includes the imports and
earlier abstractions it uses, so ``exec`` of the code alone defines a working function.
"""

from __future__ import annotations

import ast
import builtins
import logging
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from atlas.core.types import Trajectory

log = logging.getLogger(__name__)

T = tuple  # a tuple tree: ("N", type, children) | ("L", items) | ("C", value) | ("H", index)

_CTX = {"Load", "Store", "Del"}
_EXPR_TYPES = {c.__name__ for c in ast.expr.__subclasses__()}
_STMT_TYPES = {c.__name__ for c in ast.stmt.__subclasses__()}
_BUILTINS = set(dir(builtins))
_FIELDS: dict[str, tuple[str, ...]] = {"Block": ("body",)}
_BLOCK = "Block"  # a synthetic node: consecutive statements of one body, ("N", "Block", (("L", stmts),))
_SCOPES = {"ListComp", "SetComp", "DictComp", "GeneratorExp", "Lambda"}
_LOOPS = {"For", "AsyncFor", "While"}


class _Fail(Exception):
    """Anti-unification failed below a position that cannot become a hole."""


# --- tuple trees -------------------------------------------------------------------------------------------


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


# --- alpha normalization -----------------------------------------------------------------------------------


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


# --- anti-unification and matching ------------------------------------------------------------------------


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


# --- corpus --------------------------------------------------------------------------------------------


@dataclass
class Program:
    """One code snippet of the corpus with where it came from."""

    tree: T  # the Module as a tuple tree (rewritten as abstractions are chosen)
    trajectory_id: str
    source: str
    imports: dict[str, str] = field(default_factory=dict)  # bound name → import statement


@dataclass
class _Sub:
    program: int
    path: tuple[int, ...]  # a block: the path of its first statement
    norm: T
    names: dict[str, str]  # canonical → original
    size: int
    width: int = 1  # statements covered (a block may cover several)
    live: tuple[str, ...] = ()  # a block: canonical names the program reads after it (returned)

    def covers(self, other: _Sub) -> bool:
        """Do the two spans share a node? (a span = ``width`` siblings from ``path``)"""
        a, b = (self, other) if len(self.path) <= len(other.path) else (other, self)
        pa, pb = a.path[:-1], b.path[: len(a.path) - 1]
        if pa != pb:
            return False
        j = b.path[len(a.path) - 1]
        if len(a.path) == len(b.path):
            return a.path[-1] < j + b.width and j < a.path[-1] + a.width
        return a.path[-1] <= j < a.path[-1] + a.width


@dataclass
class Abstraction:
    """A chosen abstraction with its score and provenance."""

    name: str
    template: T
    params: list[str]
    free_vars: list[str]
    code: str
    benefit: float
    uses: int
    size: int
    programs: list[int]
    examples: list[tuple[str, str]]  # (original snippet, rewritten call)
    depends_on: list[str]
    returns: list[str] = field(default_factory=list)  # a block: the names its call assigns


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


def _imports_of(module: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                out[bound] = ast.unparse(node)
    return out


# --- blocks of statements ----------------------------------------------------------------------------------

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


# --- the compressor ------------------------------------------------------------------------------------


class StitchCompressor:
    """Greedy top-down library learning over a corpus of Python programs (pure, deterministic)."""

    def __init__(
        self,
        *,
        max_abstractions: int = 5,
        min_uses: int = 2,
        min_size: int = 4,
        max_group: int = 48,
        max_candidates: int = 400,
        name_prefix: str = "fn",
        max_block: int = 2,
    ) -> None:
        self.max_abstractions = max_abstractions
        self.min_uses = min_uses
        self.min_size = min_size
        self.max_group = max_group
        self.max_candidates = max_candidates
        self.name_prefix = name_prefix
        self.max_block = max_block

    # corpus ---------------------------------------------------------------------------------------------
    @staticmethod
    def parse_programs(snippets: Iterable[tuple[str, str]]) -> list[Program]:
        """(source, trajectory id) → Programs; sources that do not parse are skipped."""
        programs = []
        for source, tid in snippets:
            try:
                module = ast.parse(source)
            except SyntaxError:
                continue
            programs.append(
                Program(tree=to_tuple(module), trajectory_id=tid, source=source, imports=_imports_of(module))
            )
        return programs

    def _collect(self, programs: list[Program]) -> list[_Sub]:
        subs = []
        for pi, prog in enumerate(programs):
            for path, t in _subtrees(prog.tree):
                n = size(t)
                if n < self.min_size:
                    continue
                if not _root_ok(t):
                    continue
                norm, names = normalize(t)
                subs.append(_Sub(pi, path, norm, names, n))
            if self.max_block > 0:
                subs += self._blocks(pi, prog.tree)
        return subs

    def _blocks(self, pi: int, tree: T) -> list[_Sub]:
        """Windows of 1..max_block consecutive statements that a call (with its results assigned
        back) can replace."""
        events = _name_events(tree)
        out = []
        for body, items in _body_lists(tree):
            stmts = items[1]
            for start in range(len(stmts)):
                for width in range(1, self.max_block + 1):
                    window = stmts[start : start + width]
                    if len(window) < width or not _block_stmt_ok(window[-1]):
                        break
                    block: T = ("N", _BLOCK, (("L", tuple(window)),))
                    stored = _stored_names(block)
                    n = size(block)
                    # one statement is a block only when it is compound and assigns names; a single
                    # assignment is covered by abstracting its value, a compound one without
                    # assignments by the statement root itself
                    if n < self.min_size or (width == 1 and (not stored or window[0][1] not in _COMPOUND)):
                        continue
                    norm, names, read_first = normalize_block(block)
                    canon = {o: c for c, o in names.items()}
                    live = _live_after(tree, events, body, start, start + width) & set(stored)
                    ok = _definitely_assigned(window) | {names[c] for c in read_first}
                    if not live <= ok:  # a later read might find the name unassigned: not a candidate
                        continue
                    kept = tuple(sorted((canon[x] for x in live), key=lambda c: int(c[2:])))
                    out.append(_Sub(pi, (*body, start), norm, names, n, width=width, live=kept))
        return out

    # candidates -----------------------------------------------------------------------------------------
    def _candidates(self, subs: list[_Sub]) -> dict[T, dict[str, str]]:
        groups: dict[Any, dict[T, _Sub]] = defaultdict(dict)
        counts: dict[T, int] = defaultdict(int)
        for s in subs:
            counts[s.norm] += 1
            groups[_signature(s.norm)].setdefault(s.norm, s)
        out: dict[T, dict[str, str]] = {}
        for norm, n in counts.items():  # an identical subtree used twice is itself a candidate
            if n >= self.min_uses:
                out.setdefault(norm, groups[_signature(norm)][norm].names)
        for key, group in groups.items():
            # blocks are large and numerous (overlapping windows): fewer of them are paired
            cap = self.max_group if not isinstance(key, tuple) else max(4, self.max_group // 4)
            items = sorted(group.values(), key=lambda s: -s.size)[:cap]
            for i in range(len(items)):
                for j in range(i + 1, len(items)):
                    res = anti_unify(items[i].norm, items[j].norm)
                    if res is None:
                        continue
                    template, _ = res
                    if size(template) - self._hole_count(template) < self.min_size - 1:
                        continue
                    out.setdefault(template, items[i].names)
                    if len(out) >= self.max_candidates:
                        return out
        return out

    @staticmethod
    def _hole_count(t: T) -> int:
        return len({n[1] for n in _walk(t) if n[0] == "H"})

    # scoring --------------------------------------------------------------------------------------------
    def _free_vars(self, template: T, known: set[str]) -> list[str]:
        """Free variables that become parameters. Called names (``f(...)``) stay global: they are the
        functions of the environment (primitives, tools) the code runs against."""
        callees = {
            _name_id(_field(n, "func"))
            for n in _walk(template)
            if n[0] == "N" and n[1] == "Call" and _is_name(_field(n, "func"))
        }
        out: list[str] = []
        for ident, ctx in _names(template):
            if (
                ctx != "Load"
                or ident.startswith("_v")
                or ident in _BUILTINS
                or ident in known
                or ident in out
            ):
                continue
            if ident in callees:
                continue
            out.append(ident)
        return out

    def _score(
        self, template: T, subs: list[_Sub], n_free: int
    ) -> tuple[float, list[tuple[_Sub, dict[int, T]]], list[str]]:
        """``subs``: the corpus subtrees with the template's root type, in program then pre-order.
        Returns the benefit, the uses and (for a block) the canonical names it returns."""
        uses: list[tuple[_Sub, dict[int, T]]] = []
        taken: dict[int, list[_Sub]] = defaultdict(list)
        for s in subs:
            if any(u.covers(s) for u in taken[s.program]):
                continue
            binds: dict[int, T] = {}
            if match(template, s.norm, binds):
                uses.append((s, binds))
                taken[s.program].append(s)
        if len(uses) < self.min_uses:
            return float("-inf"), uses, []
        # the replacement is Call(Name, args) (wrapped in Expr/Return for a statement root; for a
        # block, assigned to the names it returns); a block's definition also pays for its return
        outputs: list[str] = []
        extra_args, defn = n_free, size(template)
        call_cost = 2 if template[1] in _EXPR_TYPES else 3
        if template[1] == _BLOCK:
            outputs = sorted({c for s, _ in uses for c in s.live}, key=lambda c: int(c[2:]))
            n_out = len(outputs) + (1 if len(outputs) > 1 else 0)
            call_cost += n_out
            defn += (1 + n_out) if outputs else 0
            extra_args += len(_read_first(template))
        saved = sum(
            s.size - (call_cost + extra_args + sum(size(b) for b in binds.values())) for s, binds in uses
        )
        return float(saved - defn), uses, outputs

    @staticmethod
    def _is_wrapper(template: T, library: dict[str, Any]) -> bool:
        """A call of an earlier abstraction with leaf arguments only: specializing, not compressing."""
        inner = _field(template, "value") if template[1] in {"Expr", "Return"} else template
        if inner[0] != "N" or inner[1] != "Call":
            return False
        func = _field(inner, "func")
        if not (_is_name(func) and _name_id(func) in library):
            return False
        args = _field(inner, "args")[1]
        return all(a[0] == "H" or size(a) <= 1 for a in args)

    # code generation ------------------------------------------------------------------------------------
    def _make_code(
        self,
        name: str,
        template: T,
        names: dict[str, str],
        free: list[str],
        n_holes: int,
        imports: dict[str, str],
        library: dict[str, Abstraction],
        outputs: list[str] | None = None,
    ) -> tuple[str, list[str], list[str]]:
        taken = set(free) | {n for n, _ in _names(template)}
        hole_names = {}
        for i in range(n_holes):
            candidate = f"x{i}"
            while candidate in taken:
                candidate = "_" + candidate
            hole_names[i] = candidate
        params = [hole_names[i] for i in range(n_holes)] + free
        # give bound variables their original names back when that cannot clash
        restore = {c: o for c, o in names.items() if o not in taken and o not in params}
        body_t = _rename(template, restore)
        if template[1] == _BLOCK:  # in-out names are parameters too; results are returned
            params += [restore.get(c, c) for c in _read_first(template)]
            body = from_tuple(_field(body_t, "body"), hole_names)
            outs = [restore.get(c, c) for c in outputs or []]
            if len(outs) == 1:
                body.append(ast.Return(value=ast.Name(id=outs[0], ctx=ast.Load())))
            elif outs:
                elts: list[ast.expr] = [ast.Name(id=o, ctx=ast.Load()) for o in outs]
                body.append(ast.Return(value=ast.Tuple(elts=elts, ctx=ast.Load())))
        else:
            node = from_tuple(body_t, hole_names)
            if template[1] in _EXPR_TYPES:
                body = [ast.Return(value=node)]
            elif template[1] == "Expr":
                body = [ast.Return(value=node.value)]
            else:
                body = [node]
        fn = ast.FunctionDef(
            name=name,
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=p) for p in params],
                vararg=None,
                kwonlyargs=[],
                kw_defaults=[],
                kwarg=None,
                defaults=[],
            ),
            body=body,
            decorator_list=[],
            returns=None,
        )
        if sys.version_info >= (3, 12):
            fn.type_params = []
        module = ast.Module(body=[fn], type_ignores=[])
        ast.fix_missing_locations(module)
        used = {n for n, _ in _names(template)}
        deps = [d for d in library if d in used]
        lines = sorted({imports[n] for n in used if n in imports})
        for d in deps:  # earlier abstractions this one calls (their own imports included)
            for line in library[d].code.splitlines():
                if line.startswith(("import ", "from ")) and line not in lines:
                    lines.append(line)
        parts = ["\n".join(lines)] if lines else []
        for d in deps:
            parts.append(
                "\n".join(
                    x for x in library[d].code.splitlines() if not x.startswith(("import ", "from "))
                ).strip()
            )
        parts.append(ast.unparse(module))
        return "\n\n\n".join(p for p in parts if p) + "\n", params, deps

    def _name_for(self, template: T, library: dict[str, Abstraction]) -> str:
        calls = []
        for n in _walk(template):
            if n[0] == "N" and n[1] == "Call":
                func = _field(n, "func")
                if _is_name(func):
                    calls.append(_name_id(func))
                elif func[0] == "N" and func[1] == "Attribute":
                    calls.append(_field(func, "attr")[1])
        calls = [c for c in dict.fromkeys(calls) if c.isidentifier() and not c.startswith("_")][:2]
        kind = template[1].lower()
        if template[1] == _BLOCK:
            kind = "loop" if any(n[0] == "N" and n[1] in _LOOPS for n in _walk(template)) else "block"
        base = "_".join([self.name_prefix, *calls]) if calls else f"{self.name_prefix}_{kind}"
        name, i = base, 2
        while name in library:
            name, i = f"{base}_{i}", i + 1
        return name

    # main loop ------------------------------------------------------------------------------------------
    def compress(self, programs: list[Program]) -> list[Abstraction]:
        """Choose up to ``max_abstractions`` abstractions with positive benefit, greedily."""
        library: dict[str, Abstraction] = {}
        imports: dict[str, str] = {}
        for p in programs:
            imports.update(p.imports)
        for _ in range(self.max_abstractions):
            subs = self._collect(programs)
            by_type: dict[Any, list[_Sub]] = defaultdict(list)
            for s in subs:
                by_type[_signature(s.norm)].append(s)
            # branch and bound: an upper bound on each candidate's benefit lets most go unscored
            sizes = {kind: sorted((x.size for x in group), reverse=True) for kind, group in by_type.items()}
            ranked = []
            for template, names in self._candidates(subs).items():
                if self._is_wrapper(template, library):
                    continue
                t_size = size(template)
                call_cost = 2 if template[1] in _EXPR_TYPES else 3
                bound = (
                    sum(n - call_cost for n in sizes.get(_signature(template), []) if n >= t_size) - t_size
                )
                ranked.append((bound, template, names))
            ranked.sort(key=lambda r: -r[0])
            best: tuple[float, T, dict[str, str], list[str], list, list[str]] | None = None
            for bound, template, names in ranked:
                if bound <= 0 or (best is not None and bound <= best[0]):
                    break
                free = self._free_vars(template, set(imports) | set(library))
                benefit, uses, outputs = self._score(template, by_type[_signature(template)], len(free))
                if benefit > 0 and (best is None or benefit > best[0]):
                    best = (benefit, template, names, free, uses, outputs)
            if best is None:
                break
            benefit, template, names, free, uses, outputs = best
            name = self._name_for(template, library)
            n_holes = self._hole_count(template)
            code, params, deps = self._make_code(
                name, template, names, free, n_holes, imports, library, outputs
            )
            examples = [self._rewrite(programs, s, binds, name, template, free, outputs) for s, binds in uses]
            # rewrite from the last use backwards: replacing a block shifts the statements after it
            for s, binds in sorted(uses, key=lambda u: (u[0].program, u[0].path), reverse=True):
                _, _, new = self._rewrite(programs, s, binds, name, template, free, outputs)
                tree = programs[s.program].tree
                if template[1] == _BLOCK:
                    programs[s.program].tree = _replace_span(tree, s.path, s.width, new)
                else:
                    programs[s.program].tree = _replace_at(tree, s.path, new)
            library[name] = Abstraction(
                name=name,
                template=template,
                params=params,
                free_vars=free,
                code=code,
                benefit=benefit,
                uses=len(uses),
                size=size(template),
                programs=sorted({s.program for s, _ in uses}),
                examples=[(a, b) for a, b, _ in examples[:5]],
                depends_on=deps,
                returns=[names.get(c, c) for c in outputs],
            )
            log.debug("stitch: chose %s (benefit %.1f, %d uses)", name, benefit, len(uses))
        return list(library.values())

    @staticmethod
    def _rewrite(
        programs: list[Program],
        s: _Sub,
        binds: dict[int, T],
        name: str,
        template: T,
        free: list[str],
        outputs: list[str],
    ) -> tuple[str, str, T]:
        """(original source, the call replacing it, the call as a tuple tree) for one use."""
        n_holes = len(binds)
        args: list[Any] = [from_tuple(binds[i], {}) for i in range(n_holes)]
        args += [ast.Name(id=f, ctx=ast.Load()) for f in free]
        tree = programs[s.program].tree
        if template[1] == _BLOCK:
            args += [ast.Name(id=s.names[c], ctx=ast.Load()) for c in _read_first(template)]
            stmt = _call_stmt(name, args, [s.names.get(c, c) for c in outputs])
            parent = _lookup(tree, s.path[:-1])
            items = parent[1][s.path[-1] : s.path[-1] + s.width]
            original: Any = ast.Module(body=from_tuple(("L", items), {}), type_ignores=[])
            new, shown = to_tuple(stmt), stmt
        else:
            call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])
            original = from_tuple(_lookup(tree, s.path), {})
            if original.__class__.__name__ == "Return":
                shown = ast.Return(value=call)
            elif original.__class__.__name__ in _STMT_TYPES:
                shown = ast.Expr(value=call)
            else:
                shown = call
            new = to_tuple(shown)
            shown = call
        return (
            ast.unparse(ast.fix_missing_locations(original)),
            ast.unparse(ast.fix_missing_locations(shown)),
            new,
        )


def _lookup(t: T, path: tuple[int, ...]) -> T:
    for i in path:
        t = t[2][i] if t[0] == "N" else t[1][i]
    return t


def required_globals(code: str) -> list[str]:
    """Names the code reads but neither defines, imports nor gets from builtins (e.g. the primitives
    or environment tools an abstraction calls): what must exist where it runs."""
    tree = ast.parse(code)
    defined = set(_BUILTINS)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            defined.add(node.id)
        elif isinstance(node, ast.alias):
            defined.add(node.asname or node.name.split(".")[0])
    loaded = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return sorted({n for n in loaded if n not in defined})


# --- code found in trajectories --------------------------------------------------------------------------

CODE_TOOLS = {"python", "run_python", "execute", "execute_code", "exec", "code", "run_code"}


def code_snippets(trajectory: Trajectory, min_size: int = 6) -> list[str]:
    """Python code in a trajectory: ``metadata["code"]`` / ``["program"]`` (str or list of str),
    ``args["code"]`` of steps, and step actions that parse as Python of at least ``min_size`` nodes."""
    out: list[str] = []
    for key in ("code", "program", "programs"):
        value = trajectory.metadata.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    for step in trajectory.steps:
        if step.args and isinstance(step.args.get("code"), str):
            out.append(step.args["code"])
            continue
        try:
            tree = ast.parse(step.action)
        except SyntaxError:
            continue
        if size(to_tuple(tree)) - 1 >= min_size or (step.tool in CODE_TOOLS):
            out.append(step.action)
    return list(dict.fromkeys(out))


__all__ = [
    "Abstraction",
    "Program",
    "StitchCompressor",
    "anti_unify",
    "code_snippets",
    "match",
    "normalize",
    "size",
    "to_tuple",
]
