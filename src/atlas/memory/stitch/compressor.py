"""``StitchCompressor``: the corpus (``Program``), the candidate templates, their MDL score, the greedy
choice, the generated function (``Abstraction``) and the rewriting of its uses into calls."""

from __future__ import annotations

import ast
import logging
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from atlas.memory.stitch.blocks import (
    _COMPOUND,
    _block_stmt_ok,
    _body_lists,
    _call_stmt,
    _definitely_assigned,
    _live_after,
    _name_events,
    _read_first,
    _root_ok,
    _signature,
)
from atlas.memory.stitch.templates import _stored_names, anti_unify, match, normalize, normalize_block
from atlas.memory.stitch.trees import (
    _BLOCK,
    _BUILTINS,
    _EXPR_TYPES,
    _LOOPS,
    _STMT_TYPES,
    T,
    _field,
    _is_name,
    _lookup,
    _name_id,
    _names,
    _rename,
    _replace_at,
    _replace_span,
    _subtrees,
    _walk,
    from_tuple,
    size,
    to_tuple,
)

log = logging.getLogger(__name__)


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


def _imports_of(module: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                out[bound] = ast.unparse(node)
    return out


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
