"""Genome → design module: readable Python under the ordinary design contract.

The module holds the genome itself (``GENOME``), the code of exactly the parts it uses (copied from
``parts/*.py`` with the helpers they call), and ``update`` / ``recall`` that run the parts in order.
A part that raises is reported in the runtime log and skipped; the others still run. The result goes
through the same static check, sandbox, archive and export as any design.
"""

from __future__ import annotations

import ast
import json
import pprint
from functools import cache
from pathlib import Path
from typing import Any

from atlas.alma.design import Design
from atlas.alma.genome.model import Genome

PARTS_DIR = Path(__file__).parent / "parts"
_FILES = (
    "common",
    "encode",
    "retrieve",
    "maps",
    "render",
    "conditions",
    "effects",
    "roles",
    "setters",
    "settings",
    "preludes",
    "kinds",
    "rises",
    "reveals",
    "untried",
)


@cache
def _definitions() -> tuple[dict[str, str], dict[str, set[str]], list[str]]:
    """Every top-level function/constant of the part files: name → source, name → names it uses,
    and the modules they import (``common`` excluded: it is inlined)."""
    sources: dict[str, str] = {}
    uses: dict[str, set[str]] = {}
    imports: list[str] = []
    for stem in _FILES:
        text = (PARTS_DIR / f"{stem}.py").read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in tree.body:
            if isinstance(node, ast.Import):
                imports += [a.name for a in node.names if a.name not in imports]
                continue
            if isinstance(node, ast.FunctionDef):
                name = node.name
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
            else:
                continue  # docstrings, ``from common import ...``
            if name in sources:  # a compiled design holds every part in one module: a second one would win
                raise RuntimeError(f"parts/{stem}.py defines {name!r} again: part files share one namespace")
            sources[name] = ast.get_source_segment(text, node) or ""
            uses[name] = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return sources, uses, imports


def _closure(roots: list[str]) -> list[str]:
    """``roots`` and every top-level name they use, in the part files' order."""
    sources, uses, _ = _definitions()
    wanted: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in wanted or name not in sources:
            continue
        wanted.add(name)
        stack.extend(uses[name])
    return [n for n in sources if n in wanted]


def _literal(value: object) -> str:
    return pprint.pformat(value, width=100, sort_dicts=False)


def compile_genome(genome: Genome) -> str:
    """The design module's source for ``genome``."""
    calls_update = [
        (u.part, genome.spec("encode", u).function, genome.params_of("encode", u)) for u in genome.encode
    ]
    calls_recall = [
        (u.part, genome.spec("retrieve", u).function, genome.params_of("retrieve", u))
        for u in genome.retrieve
    ]
    render_fn = genome.spec("render", genome.render).function
    names = _closure([f for _, f, _ in calls_update + calls_recall] + [render_fn])
    sources, _, imports = _definitions()
    # Genome strings are data: nothing in them may end the docstring or add a statement.
    doc = "\n".join(f"  {line}" for line in genome.describe()).replace("\\", "/").replace('"', "'")
    title = genome.name.replace("\\", "/").replace('"', "'")
    out = [
        f'"""Memory design compiled from genome {title!r} (ATLAS genome v{genome.version}, key {genome.key}).',
        "",
        doc,
        "",
        "Edit the genome and compile again (`atlas design compile`), or edit this code like any design.",
        '"""',
        "",
        *[f"import {m}" for m in sorted(imports)],
        "",
        "GENOME = " + _literal(json.loads(genome.model_dump_json())),
        "STORE = " + _literal(genome.store.model_dump()),
        "",
    ]
    for name in names:
        out += [sources[name], ""]
    out += ["", "def update(memory, episode, tools):"]
    if not calls_update:
        out.append("    return None")
    for part_name, fn, params in calls_update:
        out += [
            "    try:",
            f"        {fn}(memory, episode, tools, {_literal(params)}, STORE)",
            "    except Exception as exc:",
            f'        print("encode part {part_name} failed:", repr(exc)[:200])',
        ]
    out += ["", "", "def recall(memory, task, tools):", "    items = []"]
    for source, (part_name, fn, params) in enumerate(calls_recall):
        out += [
            "    try:",
            f"        items += [{{**i, 'source': {source}}} for i in {fn}(memory, task, tools, {_literal(params)})]",
            "    except Exception as exc:",
            f'        print("retrieve part {part_name} failed:", repr(exc)[:200])',
        ]
    out.append(f"    return {render_fn}(items, {_literal(genome.params_of('render', genome.render))})")
    return "\n".join(out) + "\n"


def genome_design(genome: Genome, *, name: str | None = None, **fields: Any) -> Design:
    """A Design whose source is the compiled genome; the genome rides along in ``metadata['genome']``."""
    meta = dict(fields.pop("metadata", None) or {})
    meta["genome"] = json.loads(genome.model_dump_json())
    return Design(name=name or genome.name, source=compile_genome(genome), metadata=meta, **fields)


def genome_of(design: Design) -> Genome | None:
    """The genome a design was compiled from (None for a design written as code)."""
    from atlas.alma.genome.model import parse_genome

    data = design.metadata.get("genome") if design.metadata else None
    return parse_genome(data) if isinstance(data, dict) else None


__all__ = ["compile_genome", "genome_design", "genome_of"]
