"""Code operators on memory designs, with ``ast``: edit one function of a parent, cross two parents.

- ``splice(parent, replacement)``: the replacement's top-level functions replace the parent's
  functions of the same name (a new name is added as a helper); the rest of the parent, comments
  included, is kept line for line. This is how the MetaAgent mutates a parent by editing ONE
  function instead of rewriting the module.
- ``crossover(a, b)``: a child with ``update`` (and what it needs) from ``a`` and ``recall`` (and what
  it needs) from ``b``; a helper or constant both define differently is renamed in ``b``'s part.
  Deterministic: no model is asked.

Both return source text that still has to pass ``check_design`` and the smoke run, like any design.
"""

from __future__ import annotations

import ast

from atlas.errors import DesignError

REQUIRED = ("update", "recall")


def _parse(source: str, what: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise DesignError(
            f"{what} is not valid Python (line {exc.lineno}: {exc.msg}); reply with the whole "
            "function, from its `def` line to its last line, in one ```python fence"
        ) from exc


def _defined(node: ast.stmt) -> list[str]:
    """Top-level names a statement defines."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


def functions(source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's top-level functions by name."""
    return {
        n.name: n
        for n in _parse(source, "the design").body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def splice(parent: str, replacement: str) -> str:
    """``parent`` with each top-level function of ``replacement`` put in place of its namesake
    (or appended, for a new helper). Imports in ``replacement`` that the parent lacks go on top."""
    new = _parse(replacement, "the replacement")
    defs = [n for n in new.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not defs:
        raise DesignError(
            "the reply holds no function to put into the parent: reply with one complete "
            "`def update(...)`, `def recall(...)` or helper function in a ```python fence"
        )
    rep_lines = replacement.splitlines()
    lines = parent.splitlines()
    current = functions(parent)
    appended: list[str] = []
    # Replace from the bottom up so earlier line numbers stay valid.
    for node in sorted(defs, key=lambda n: -(current[n.name].lineno if n.name in current else 0)):
        text = rep_lines[_start(node) - 1 : node.end_lineno]
        if node.name in current:
            old = current[node.name]
            lines[_start(old) - 1 : old.end_lineno] = text
        else:
            appended += ["", "", *text]
    imports = [
        ast.get_source_segment(replacement, n) or ""
        for n in new.body
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]
    have = {
        ast.get_source_segment(parent, n)
        for n in _parse(parent, "the parent").body
        if isinstance(n, ast.Import | ast.ImportFrom)
    }
    head = [imp for imp in imports if imp not in have]
    out = "\n".join([*head, *lines, *appended]).strip("\n") + "\n"
    _parse(out, "the edited design")
    return out


def _start(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _needs(module: ast.Module, root: str) -> list[ast.stmt]:
    """The top-level statements ``root`` needs: itself, the helpers and constants it names, theirs,
    and every import (cheap, and what a helper imports is hard to trace); in module order."""
    by_name: dict[str, ast.stmt] = {}
    for node in module.body:
        for name in _defined(node):
            by_name.setdefault(name, node)
    wanted: set[int] = set()
    todo = [by_name[root]]
    while todo:
        node = todo.pop()
        if id(node) in wanted:
            continue
        wanted.add(id(node))
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in by_name and id(by_name[n.id]) not in wanted:
                todo.append(by_name[n.id])
    return [n for n in module.body if id(n) in wanted or isinstance(n, ast.Import | ast.ImportFrom)]


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node


def crossover(a: str, b: str, *, suffix: str = "_b") -> str:
    """A child with ``update`` from ``a`` and ``recall`` from ``b``, each with what it needs."""
    mod_a, mod_b = _parse(a, "parent A"), _parse(b, "parent B")
    for mod, label in ((mod_a, "A"), (mod_b, "B")):
        missing = [
            f for f in REQUIRED if f not in {n.name for n in mod.body if isinstance(n, ast.FunctionDef)}
        ]
        if missing:
            raise DesignError(f"parent {label} has no top-level {', '.join(missing)}(): cannot cross it")
    part_a = _needs(mod_a, "update")
    part_b = _needs(mod_b, "recall")
    seen_a = {name: ast.unparse(n) for n in part_a for name in _defined(n)}
    renames: dict[str, str] = {}
    for n in part_b:
        if isinstance(n, ast.Import | ast.ImportFrom):
            continue
        for name in _defined(n):
            if name in seen_a and seen_a[name] != ast.unparse(n) and name not in REQUIRED:
                renames[name] = name + suffix
    renames.pop("recall", None)
    body_b = [_Rename(renames).visit(n) for n in part_b] if renames else part_b
    texts_a = [ast.unparse(n) for n in part_a]
    out: list[str] = []
    for text in [*texts_a, *(ast.unparse(n) for n in body_b)]:
        if text not in out:
            out.append(text)
    # Imports first, then the rest in order, one blank-line-separated block each.
    imports = [t for t in out if t.startswith(("import ", "from "))]
    rest = [t for t in out if t not in imports]
    source = "\n".join(imports) + ("\n\n\n" if imports else "") + "\n\n\n".join(rest) + "\n"
    _parse(source, "the crossed design")
    return source


__all__ = ["crossover", "functions", "splice"]
