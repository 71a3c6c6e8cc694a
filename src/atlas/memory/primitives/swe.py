"""Software-engineering primitives: real, self-contained functions over a code base on disk.

Like the ARC primitives, each function's source is a complete ``CodeConcept.code`` (imports inside).
"""

from __future__ import annotations

from atlas.core.types import CodeConcept
from atlas.memory.primitives.arc import concept_from_function


def read_file(path: str, start: int = 1, end: int | None = None) -> str:
    """Read a text file, optionally only lines ``start``..``end`` (1-based, inclusive)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines(keepends=True)
    stop = len(lines) if end is None else end
    return "".join(lines[max(start, 1) - 1 : stop])


def write_file(path: str, content: str) -> int:
    """Write ``content`` to ``path`` (creating parent folders); returns the number of characters written."""
    import os

    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        return fh.write(content)


def list_files(root: str, suffix: str = "") -> list[str]:
    """Relative paths of the files under ``root`` ending with ``suffix``, sorted; hidden folders skipped."""
    import os

    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in files:
            if name.endswith(suffix):
                out.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(out)


def search_codebase(
    root: str, pattern: str, suffix: str = ".py", max_hits: int = 100
) -> list[tuple[str, int, str]]:
    """Regex search over files under ``root``: (relative path, line number, line) per hit."""
    import os
    import re

    rx = re.compile(pattern)
    hits = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(suffix):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    if rx.search(line):
                        hits.append((os.path.relpath(path, root), number, line.rstrip("\n")))
                        if len(hits) >= max_hits:
                            return hits
    return hits


def replace_in_file(path: str, old: str, new: str, count: int = 1) -> int:
    """Replace ``old`` by ``new`` (at most ``count`` times, 0 = all); returns replacements made.

    Raises ValueError when ``old`` does not occur, so a wrong edit is never silent."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    found = text.count(old)
    if found == 0:
        raise ValueError(f"text to replace not found in {path}")
    n = found if count == 0 else min(count, found)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new, n))
    return n


def find_definition(root: str, name: str) -> list[tuple[str, int]]:
    """Where a Python function or class called ``name`` is defined: (relative path, line number)."""
    import ast
    import os

    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for fname in sorted(files):
            if not fname.endswith(".py"):
                continue
            path = os.path.join(folder, fname)
            with open(path, encoding="utf-8", errors="replace") as fh:
                try:
                    tree = ast.parse(fh.read())
                except SyntaxError:
                    continue
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    and node.name == name
                ):
                    found.append((os.path.relpath(path, root), node.lineno))
    return sorted(found)


def run_command(args: list[str], cwd: str | None = None, timeout: float = 60.0) -> dict:
    """Run a command (no shell); returns ``returncode``, ``stdout``, ``stderr`` (timeout → returncode -9)."""
    import subprocess

    try:
        proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        return {"returncode": -9, "stdout": exc.stdout or "", "stderr": f"timed out after {timeout}s"}
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def run_tests(path: str = ".", args: list[str] | None = None, timeout: float = 600.0) -> dict:
    """Run pytest in ``path`` with the current interpreter; returns ``passed`` plus the run's output."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "pytest", "-q", *(args or [])]
    try:
        proc = subprocess.run(cmd, cwd=path, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"passed": False, "returncode": -9, "output": f"timed out after {timeout}s"}
    return {
        "passed": proc.returncode == 0,
        "returncode": proc.returncode,
        "output": proc.stdout + proc.stderr,
    }


SWE_FUNCTIONS = {
    f.__name__: f
    for f in (
        read_file,
        write_file,
        list_files,
        search_codebase,
        replace_in_file,
        find_definition,
        run_command,
        run_tests,
    )
}


class SWEPrimitiveLoader:
    """Loads the software-engineering primitives above as concepts keyed by name."""

    domain = "swe"

    def load(self) -> dict[str, CodeConcept]:
        return {name: concept_from_function(fn, self.domain) for name, fn in SWE_FUNCTIONS.items()}


__all__ = ["SWEPrimitiveLoader", "SWE_FUNCTIONS", *SWE_FUNCTIONS]
