"""A memory design (source text + identity) and its static check.

A design is one Python module defining ``update(memory, episode, tools) -> None`` and
``recall(memory, task, tools) -> str`` (see docs/design.md, "The memory-design contract").
The static check is a *defence layer*, not the sandbox: it rejects the obvious ways out
(imports outside an allow-list, dunder access, frame/traceback walking, dynamic code) with
precise messages and line numbers, so the meta-agent gets useful feedback before any run.
The sandbox (``atlas.alma.sandbox``) contains whatever gets past it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from atlas.core.types import new_id, utc_now
from atlas.errors import DesignCheckError

#: Modules a design may import (the whole module or names from it).
ALLOWED_IMPORTS: frozenset[str] = frozenset(
    {"math", "re", "json", "collections", "itertools", "functools", "heapq", "statistics", "string", "random"}
)

#: Builtins a design may not name at all.
FORBIDDEN_NAMES: frozenset[str] = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "open",
        "input",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "__import__",
        "breakpoint",
        "help",
        "exit",
        "quit",
        "memoryview",
    }
)

#: Attribute names that walk to frames, code objects or globals without a dunder
#: (the classic escapes: ``exc.__traceback__.tb_frame.f_back.f_globals``, ``gen.gi_frame``).
FORBIDDEN_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "tb_frame",
        "tb_next",
        "tb_lasti",
        "tb_lineno",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "f_trace",
        "f_lasti",
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "gi_running",
        "cr_frame",
        "cr_code",
        "cr_await",
        "cr_origin",
        "ag_frame",
        "ag_code",
        "ag_await",
        "co_code",
        "co_consts",
        "co_names",
        "co_filename",
        "func_globals",
        "func_code",
        "mro",
        "format_map",
    }
)

REQUIRED_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "update": ("memory", "episode", "tools"),
    "recall": ("memory", "task", "tools"),
}

_DUNDER = re.compile(r"__\w+__")
_FORMAT_ATTR = re.compile(r"\{[^{}]*\.\s*_")  # "{0._x}" / "{0.__class__}" in a format string

_FRAME_WORD = re.compile(r"\b(" + "|".join(sorted(FORBIDDEN_ATTRIBUTES - {"mro", "format_map"})) + r")\b")

Origin = Literal["seed", "baseline", "meta", "host"]


class DesignProblem(BaseModel):
    """One static-check finding. ``line`` is 1-based (0 when it concerns the whole module)."""

    model_config = ConfigDict(frozen=True)

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class Design(BaseModel):
    """A memory design: its source and where it came from.

    ``origin == "host"`` marks a trusted, host-side adapter (``metadata["adapter"]`` names it);
    its ``source`` is documentation only and never runs in the sandbox.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_id)
    name: str
    source: str
    parent_ids: list[str] = Field(default_factory=list)
    origin: Origin = "meta"
    created_at: datetime = Field(default_factory=utc_now)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def source_hash(self) -> str:
        """SHA-256 of the source: the key under which workers cache the compiled module."""
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()

    def check(self) -> list[DesignProblem]:
        if self.origin == "host":
            return []
        return check_design(self.source)


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.problems: list[DesignProblem] = []

    def _add(self, node: ast.AST, message: str) -> None:
        self.problems.append(DesignProblem(line=getattr(node, "lineno", 0), message=message))

    def _check_module(self, node: ast.AST, module: str | None, level: int) -> None:
        if level:
            self._add(node, "relative imports are not allowed")
            return
        top = (module or "").split(".")[0]
        if top not in ALLOWED_IMPORTS:
            allowed = ", ".join(sorted(ALLOWED_IMPORTS))
            self._add(node, f"import of {module!r} is not allowed (allowed: {allowed})")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name, 0)
            self._check_identifier(node, alias.asname)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._check_module(node, node.module, node.level)
        for alias in node.names:
            if alias.name == "*":
                self._add(node, "'from ... import *' is not allowed")
            self._check_identifier(node, alias.name)
            self._check_identifier(node, alias.asname)
        self.generic_visit(node)

    def _check_identifier(self, node: ast.AST, name: str | None) -> None:
        if not name:
            return
        if name.startswith("__") and name.endswith("__"):
            self._add(node, f"dunder name {name!r} is not allowed")
        elif name in FORBIDDEN_NAMES:
            self._add(node, f"{name!r} is not allowed in a design")

    def visit_Name(self, node: ast.Name) -> None:
        self._check_identifier(node, node.id)
        if node.id == "self" and isinstance(node.ctx, ast.Store | ast.Del):
            self._add(node, "'self' cannot be assigned: it names the instance of a method")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del) and not _is_self(node.value):
            # json.JSONDecoder.stash = ...: classes and modules of the allowed modules are shared by
            # every call a worker runs, so an attribute set on them would carry data past `memory`.
            self._add(
                node,
                f"setting or deleting the attribute '.{node.attr}' is not allowed (only 'self.{node.attr}' "
                "in a class of the design): keep state in the memory dict",
            )
        if node.attr in ("format", "vformat") and not (
            isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        ):
            # "{0." + "_" * 2 + "class" ...: a format string built at run time reads any attribute
            self._add(
                node,
                f"'.{node.attr}' is only allowed on a string literal (\"...\".format(x)); use an f-string",
            )
        if node.attr.startswith("__") and node.attr.endswith("__"):
            self._add(node, f"dunder attribute '.{node.attr}' is not allowed")
        elif node.attr in FORBIDDEN_ATTRIBUTES:
            self._add(node, f"attribute '.{node.attr}' (frame/code/globals access) is not allowed")
        elif node.attr.startswith("_"):
            self._add(node, f"private attribute '.{node.attr}' is not allowed")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._check_identifier(node, node.name)
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            self._check_identifier(arg, arg.arg)
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                self._check_identifier(extra, extra.arg)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._check_identifier(node, node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self._check_identifier(node, name)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        for name in node.names:
            self._check_identifier(node, name)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            if _DUNDER.search(node.value):
                dunder = _DUNDER.search(node.value)
                assert dunder is not None
                self._add(node, f"string containing a dunder name ({dunder.group(0)!r}) is not allowed")
            elif _FORMAT_ATTR.search(node.value):
                self._add(node, "format field with private attribute access ('{x._...}') is not allowed")
            elif _FRAME_WORD.search(node.value):
                frame = _FRAME_WORD.search(node.value)
                assert frame is not None
                word = frame.group(0)
                self._add(node, f"string naming a frame/code attribute ({word!r}) is not allowed")

    def visit_keyword(self, node: ast.keyword) -> None:
        self._check_identifier(node, node.arg)
        self.generic_visit(node)


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _own_yield(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST | None:
    """The first ``yield`` in ``fn`` itself (not in a nested function, lambda or class)."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))
    return None


def _signature_problems(tree: ast.Module) -> list[DesignProblem]:
    problems: list[DesignProblem] = []
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for name, params in REQUIRED_FUNCTIONS.items():
        fn = defs.get(name)
        if fn is None:
            wanted = f"def {name}({', '.join(params)})"
            problems.append(DesignProblem(line=0, message=f"missing top-level function: {wanted}"))
            continue
        if isinstance(fn, ast.AsyncFunctionDef):
            problems.append(
                DesignProblem(line=fn.lineno, message=f"{name} must be a plain function, not async")
            )
        elif (found := _own_yield(fn)) is not None:
            returns = "a str" if name == "recall" else "None"
            problems.append(
                DesignProblem(
                    line=getattr(found, "lineno", fn.lineno),
                    message=f"{name} must return {returns}, but 'yield' makes it a generator; collect the "
                    "values in a list (or move the yield into a helper function)",
                )
            )
        got = tuple(a.arg for a in [*fn.args.posonlyargs, *fn.args.args])
        required = len(got) - len(fn.args.defaults)
        if got[: len(params)] != params or required > len(params):
            problems.append(
                DesignProblem(
                    line=fn.lineno,
                    message=f"{name} must take parameters ({', '.join(params)}), got ({', '.join(got)})",
                )
            )
    return problems


def check_design(source: str) -> list[DesignProblem]:
    """All static problems of ``source`` (empty list = passes), sorted by line."""
    if not isinstance(source, str) or not source.strip():
        return [DesignProblem(line=0, message="design source is empty")]
    return list(_checked(source))


@functools.lru_cache(maxsize=128)
def _checked(source: str) -> tuple[DesignProblem, ...]:
    """``check_design`` of one source, remembered: the screening checks each candidate once per
    smoke run and sandbox runner, and parsing a compiled genome takes tens of milliseconds."""
    try:
        tree = ast.parse(source, filename="<design>")
    except SyntaxError as exc:
        detail = f": {exc.text.strip()}" if exc.text else ""
        return (DesignProblem(line=exc.lineno or 0, message=f"syntax error: {exc.msg}{detail}"),)
    checker = _Checker()
    checker.visit(tree)
    problems = _signature_problems(tree) + checker.problems
    return tuple(sorted(set(problems), key=lambda p: (p.line, p.message)))


def ensure_valid(source: str) -> None:
    """Raise DesignCheckError listing every problem if ``source`` fails the static check."""
    problems = check_design(source)
    if problems:
        raise DesignCheckError([str(p) for p in problems])


__all__ = [
    "ALLOWED_IMPORTS",
    "FORBIDDEN_ATTRIBUTES",
    "FORBIDDEN_NAMES",
    "Design",
    "DesignProblem",
    "check_design",
    "ensure_valid",
]
