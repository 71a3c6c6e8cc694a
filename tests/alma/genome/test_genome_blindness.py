"""Environment-blindness: the parts' code and the catalog name no environment, its rooms or its
actions. The only exceptions: ``baselines.py`` (not scanned: it ports hand-built designs) and the
parameter defaults of catalog parts marked ``generic=False``. Also checked on what actually ships:
the compiled module of each generic part alone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import atlas.alma.genome as genome_pkg
from atlas.alma.genome import PARTS, compile_genome, parse_genome

GENOME_DIR = Path(genome_pkg.__file__).parent
PART_FILES = sorted((GENOME_DIR / "parts").glob("*.py"))
WORDS = (
    "room",
    "rooms",
    "move_to",
    "pick_up",
    "put_down",
    "graphworld",
    "alfworld",
    "textworld",
    "kitchen",
    "fridge",
    "door",
    "craft",
    "crafting",
    "workbench",
    "soap",
    "soapbar",
    "cabinet",
    "countertop",
    "sinkbasin",
    "microwave",
    "boil",
    "thermometer",
    "ore",
    "ingot",
    "gather",
    "combine",
    "mount",
    "gadget",
    "lever",
    "railyard",
    "siding",
    "wagon",
    "headshunt",
    "kiln",
    "clay",
    "greenhouse",
    "bureau",
    "licence",
    "permit",
)
# letters around a word make another word (broom, roomy); digits, "_" and punctuation do not (room_A)
ENV_WORD = re.compile(r"(?<![A-Za-z])(" + "|".join(WORDS) + r")(?![A-Za-z])", re.IGNORECASE)


def _hits(text: str, skip: list[tuple[int, int]] = ()) -> list[str]:
    """'line N: <line>' for every environment word in ``text`` outside the ``skip`` character ranges."""
    out = []
    for m in ENV_WORD.finditer(text):
        if any(a <= m.start() < b for a, b in skip):
            continue
        line = text.count("\n", 0, m.start()) + 1
        shown = text.splitlines()[line - 1]
        out.append(f"line {line}: {m.group(0)!r} in {shown.strip()!r}")
    return out


def test_the_scan_sees_the_words():
    assert _hits("move_to room_A; Pick_Up the key in the Kitchen; rooms") and len(_hits("room_A rooms")) == 2
    assert _hits("a broom, roomy, bedrooms, mover, picked up") == []


def test_part_files_are_all_scanned():
    assert {p.stem for p in PART_FILES} == {
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
        "rises",
        "reveals",
        "kinds",
        "untried",
    }


@pytest.mark.parametrize("path", PART_FILES, ids=lambda p: p.name)
def test_part_code_names_no_environment(path):
    text = path.read_text(encoding="utf-8")
    assert _hits(text) == [], f"{path.name} names an environment"


def _non_generic_param_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of the ``params`` of every ``Part(..., generic=False)`` call in ``text``."""
    tree = ast.parse(text)
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    ranges = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Part"):
            continue
        generic = next((k.value for k in node.keywords if k.arg == "generic"), None)
        if not (isinstance(generic, ast.Constant) and generic.value is False):
            continue
        params = (
            node.args[3] if len(node.args) > 3 else next(k.value for k in node.keywords if k.arg == "params")
        )
        ranges.append(
            (
                starts[params.lineno - 1] + params.col_offset,
                starts[params.end_lineno - 1] + params.end_col_offset,
            )
        )
    return ranges


CATALOG_FILES = ("catalog.py", "part_spec.py", "encode_parts.py", "retrieve_parts.py")


def test_catalog_names_no_environment_outside_non_generic_defaults():
    skipped = 0
    for name in CATALOG_FILES:
        text = (GENOME_DIR / name).read_text(encoding="utf-8")
        skip = _non_generic_param_ranges(text)
        skipped += len(skip)
        assert _hits(text, skip) == [], name
    assert skipped == sum(1 for p in PARTS if not p.generic) == 2  # graph_edges, map_notes


def test_catalog_descriptions_of_generic_parts_name_no_environment():
    for p in PARTS:
        if not p.generic:
            continue
        texts = [p.summary] + [
            f"{q.name} {q.doc} {q.default} {' '.join(map(str, q.choices))}" for q in p.params
        ]
        assert _hits("\n".join(texts)) == [], p.name


def _alone(spec) -> dict:
    """A genome with ``spec`` and the encode parts it reads (a render part: with nothing else)."""
    if spec.role == "render":
        return {"render": {"part": spec.name}}
    if spec.role == "encode":
        return {"encode": [{"part": spec.name}]}
    return {"encode": [{"part": r} for r in spec.requires], "retrieve": [{"part": spec.name}]}


GENERIC = [p for p in PARTS if p.generic]


@pytest.mark.parametrize("spec", GENERIC, ids=lambda p: f"{p.role}-{p.name}")
def test_compiled_module_of_a_generic_part_names_no_environment(spec):
    source = compile_genome(parse_genome({"name": "probe", **_alone(spec)}))
    assert f"def {spec.function}(" in source
    assert _hits(source) == []


def test_no_two_part_files_define_the_same_name():
    """A compiled design holds every part's code in one module, so a name two files define would have
    the later file's version serve both."""
    seen: dict[str, str] = {}
    for path in PART_FILES:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) or (
                isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            ):
                name = node.name if isinstance(node, ast.FunctionDef) else node.targets[0].id
                assert name not in seen, f"{name} in {seen.get(name)} and {path.name}"
                seen[name] = path.name
