"""docs/design.md names only paths that exist: every backticked path-like token (one with a ``/``
that ends in .py, .md, .json or ``/``) is a file or folder of the repository, relative to its root.
A template (``src/atlas/alma/genome/parts/<role>.py``) must have its fixed folder, the part before
the first ``<``. Fenced code blocks are pictures (of a run folder, of a flow), not references.
Every backticked dotted name under ``atlas.`` imports (a module, or a name in one)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "design.md"
PATH_END = (".py", ".md", ".json", "/")
NOT_MODULES = {"atlas.plugins"}  # the entry-point group plug-ins declare, not a module


def path_tokens(text: str) -> list[str]:
    """Backticked tokens outside fenced blocks that look like repository paths."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    tokens = re.findall(r"`([^`\n]+)`", prose)
    return [t for t in tokens if "/" in t and " " not in t and t.endswith(PATH_END)]


def missing_paths(text: str) -> list[str]:
    missing = []
    for token in path_tokens(text):
        if "<" in token:
            fixed = token.split("<", 1)[0].rsplit("/", 1)[0]
            if not fixed or not (ROOT / fixed).is_dir():
                missing.append(token)
        elif not (ROOT / token).exists() or (token.endswith("/") and not (ROOT / token).is_dir()):
            missing.append(token)
    return missing


def test_every_path_in_the_design_doc_exists():
    tokens = path_tokens(DOC.read_text(encoding="utf-8"))
    assert len(tokens) > 20  # the extraction found the doc's paths
    assert missing_paths(DOC.read_text(encoding="utf-8")) == []


def test_the_extraction_sees_paths_and_templates_and_skips_pictures():
    text = "see `src/atlas/alma/` and `nope/gone.py`, `a/<x>.py`, `src/atlas/alma/<x>.py`, `a b/c.py`\n"
    text += "```\n`inside/fence.py`\n```\n`atlas.alma.search.loop` `runs/NAME`\n"
    assert path_tokens(text) == ["src/atlas/alma/", "nope/gone.py", "a/<x>.py", "src/atlas/alma/<x>.py"]
    assert missing_paths(text) == ["nope/gone.py", "a/<x>.py"]


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_every_atlas_name_in_the_design_doc_imports():
    prose = re.sub(r"^```.*?^```", "", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)
    names = sorted(set(re.findall(r"`(atlas(?:\.\w+)+)`", prose)))
    assert names  # the doc names some
    assert [n for n in names if n not in NOT_MODULES and not _resolves(n)] == []


def test_the_readme_links_the_design_doc():
    contents = (ROOT / "README.md").read_text(encoding="utf-8").split("## Documentation", 1)[1]
    assert "(docs/design.md)" in contents
