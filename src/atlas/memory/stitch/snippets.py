"""Code found in trajectories (the compressor's corpus) and the globals an abstraction needs where it runs."""

from __future__ import annotations

import ast

from atlas.core.types import Trajectory
from atlas.memory.stitch.trees import _BUILTINS, size, to_tuple


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
