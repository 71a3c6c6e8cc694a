"""Static check of designs: precise messages with line numbers, explicit deny-lists, and the
``atlas design check|list|show`` commands."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from atlas.alma.baselines import SOURCE_BASELINES, baseline_source
from atlas.alma.design import (
    ALLOWED_IMPORTS,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_NAMES,
    Design,
    check_design,
    ensure_valid,
)
from atlas.errors import DesignCheckError

OK = textwrap.dedent("""
    import json
    from collections import Counter

    LIMIT = 3


    def _helper(x):
        return x


    def update(memory, episode, tools):
        memory["n"] = memory.get("n", 0) + 1


    def recall(memory, task, tools):
        return json.dumps(Counter(task["goal"]).most_common(LIMIT))
""")


def design_with(line: str) -> str:
    """A valid design with ``line`` inserted as line 2 of ``recall`` (line 17 of the source)."""
    return OK.replace("    return json.dumps", f"    {line}\n    return json.dumps")


def messages(source: str) -> list[str]:
    return [str(p) for p in check_design(source)]


def test_valid_design_passes():
    assert check_design(OK) == []
    ensure_valid(OK)


@pytest.mark.parametrize("name", sorted(SOURCE_BASELINES))
def test_every_baseline_passes(name):
    assert check_design(baseline_source(name)) == []


def test_syntax_error_has_line():
    out = messages(
        "def update(memory, episode, tools):\n    pass\ndef recall(memory, task, tools)\n    return ''\n"
    )
    assert len(out) == 1 and out[0].startswith("line 3: syntax error")


def test_missing_functions_and_wrong_parameters():
    out = messages("def update(memory, episode):\n    pass\n")
    assert "line 1: update must take parameters (memory, episode, tools), got (memory, episode)" in out
    assert "missing top-level function: def recall(memory, task, tools)" in out
    out = messages(
        "def update(memory, episode, tools):\n    pass\nasync def recall(memory, task, tools):\n    return ''\n"
    )
    assert "line 3: recall must be a plain function, not async" in out


def test_empty_source():
    assert messages("   ") == ["design source is empty"]


@pytest.mark.parametrize(
    "module",
    [
        "os",
        "sys",
        "subprocess",
        "socket",
        "ctypes",
        "importlib",
        "builtins",
        "io",
        "pathlib",
        "shutil",
        "pickle",
        "marshal",
        "types",
        "inspect",
        "gc",
        "threading",
        "multiprocessing",
        "signal",
        "resource",
        "urllib.request",
        "os.path",
        "numpy",
        "atlas",
        "codecs",
        "tempfile",
        "asyncio",
    ],
)
def test_forbidden_imports(module):
    for stmt in (f"import {module}", f"from {module} import x", f"import {module} as m"):
        out = messages(design_with(stmt))
        assert any(f"line 17: import of {module!r} is not allowed" in m for m in out), (stmt, out)


@pytest.mark.parametrize("module", sorted(ALLOWED_IMPORTS))
def test_allowed_imports(module):
    assert check_design(design_with(f"import {module}")) == []


def test_relative_and_star_imports():
    assert any("relative imports" in m for m in messages(design_with("from . import x")))
    assert any("import *" in m for m in messages(design_with("from math import *")))


@pytest.mark.parametrize("name", sorted(FORBIDDEN_NAMES - {"__import__"}))
def test_forbidden_builtins(name):
    out = messages(design_with(f"f = {name}"))
    assert f"line 17: {name!r} is not allowed in a design" in out


@pytest.mark.parametrize(
    "attr",
    [
        "__class__",
        "__subclasses__",
        "__globals__",
        "__builtins__",
        "__dict__",
        "__code__",
        "__traceback__",
        "__bases__",
        "__mro__",
        "__init__",
        "__reduce__",
    ],
)
def test_dunder_attributes(attr):
    out = messages(design_with(f"x = memory.{attr}"))
    assert f"line 17: dunder attribute '.{attr}' is not allowed" in out


@pytest.mark.parametrize("attr", sorted(FORBIDDEN_ATTRIBUTES))
def test_frame_walking_attributes(attr):
    out = messages(design_with(f"x = memory.{attr}"))
    assert any(f"line 17: attribute '.{attr}'" in m for m in out), out


@pytest.mark.parametrize(
    "code", ["x = __name__", "__import__('os')", "def __init__(self): pass", "x = __builtins__"]
)
def test_dunder_names(code):
    assert any("dunder name" in m for m in messages(design_with(code))), code


@pytest.mark.parametrize(
    "code,fragment",
    [
        ("x = '{0.__class__}'.format(memory)", "string containing a dunder name"),
        ("x = '{0._secret}'.format(memory)", "format field with private attribute access"),
        ("x = 'gi_frame'", "frame/code attribute"),
        ("x = random._os", "private attribute '._os'"),
    ],
)
def test_strings_and_private_attributes(code, fragment):
    assert any(fragment in m for m in messages(design_with(code))), code


def test_obfuscated_escapes_are_all_reported():
    source = design_with(
        "g = (i for i in [0]); f = g.gi_frame.f_back.f_globals; e = eval('1'); o = getattr(f, 'x')"
    )
    out = messages(source)
    for needle in (
        "'.gi_frame'",
        "'.f_back'",
        "'.f_globals'",
        "'eval' is not allowed",
        "'getattr' is not allowed",
    ):
        assert any(needle in m for m in out), needle


def test_ensure_valid_raises_with_problems():
    with pytest.raises(DesignCheckError) as info:
        ensure_valid(design_with("import os"))
    assert info.value.problems and "line 17" in info.value.problems[0]


def test_design_model():
    d = Design(name="x", source=OK)
    assert d.origin == "meta" and d.check() == [] and len(d.source_hash) == 64
    assert Design(name="h", source="not python", origin="host").check() == []


# --- CLI ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli():
    from atlas.cli import app

    return app


def test_cli_list_and_show(cli):
    runner = CliRunner()
    out = runner.invoke(cli, ["design", "list"])
    assert out.exit_code == 0 and "spatial_graph" in out.output and "memory_system" in out.output
    out = runner.invoke(cli, ["design", "show", "spatial_graph"])
    assert out.exit_code == 0 and "def recall(memory, task, tools)" in out.output
    out = runner.invoke(cli, ["design", "show", "nope"])
    assert out.exit_code == 2


def test_cli_check_invalid_design(cli, tmp_path):
    f = tmp_path / "bad.py"
    f.write_text(design_with("import os"))
    out = CliRunner().invoke(cli, ["design", "check", str(f), "--feedback"])
    assert out.exit_code == 1
    assert "INVALID" in out.output and "line 17: import of 'os' is not allowed" in out.output


@pytest.mark.slow
def test_cli_check_good_and_crashing_design(cli, tmp_path):
    good = tmp_path / "good.py"
    good.write_text(baseline_source("spatial_graph"))
    out = CliRunner().invoke(cli, ["design", "check", str(good), "--episodes", "2", "--no-embed"])
    assert out.exit_code == 0, out.output
    assert "OK" in out.output and "landlock" in out.output
    bad = tmp_path / "crash.py"
    bad.write_text(
        "def update(memory, episode, tools):\n    pass\n\n\ndef recall(memory, task, tools):\n"
        "    return task['nope']\n"
    )
    out = CliRunner().invoke(cli, ["design", "check", str(bad), "--episodes", "1", "--no-embed", "--json"])
    assert out.exit_code == 1
    report = json.loads(out.output)
    assert report["ok"] is False and "KeyError: 'nope' (design line 6)" in report["calls"][0]["error"]
    empty = tmp_path / "empty.py"
    empty.write_text(baseline_source("no_memory"))
    out = CliRunner().invoke(
        cli, ["design", "check", str(empty), "--episodes", "1", "--no-embed", "--feedback"]
    )
    assert out.exit_code == 1 and "NO ADVICE" in out.output


@pytest.mark.slow
def test_smoke_run_stops_early_on_a_hanging_design():
    from atlas.alma.author.smoke import smoke_run
    from atlas.alma.sandbox.pool import SandboxLimits
    from atlas.infra.embeddings import NGramEmbedder

    source = (
        "def update(memory, episode, tools):\n    while True:\n        pass\n\n\n"
        "def recall(memory, task, tools):\n    return 'x'\n"
    )
    report = smoke_run(source, "graphworld", 3, embedder=NGramEmbedder(), limits=SandboxLimits(timeout_s=1.0))
    assert not report.ok and report.stopped_early == "stopped after 2 timed-out calls"
    assert len(report.calls) == 4 and "timed out after 1 s" in report.to_feedback()


def test_generator_update_or_recall_is_reported():
    """``yield`` in recall/update makes it return a generator, which only failed at run time."""
    out = messages(design_with("yield 'advice'"))
    assert any(
        m.startswith("line 17: recall must return a str, but 'yield' makes it a generator") for m in out
    ), out
    nested = design_with("def steps():\n        yield 1\n    x = list(steps()); y = lambda: (yield)")
    assert check_design(nested) == []  # a yield in a nested helper is fine


@pytest.mark.parametrize(
    "line",
    [
        "json.JSONDecoder.stash = task['goal']",
        "json.stash = 1",
        "Counter.most_common.x = 1",
        "del json.JSONDecoder.decode",
        "json.JSONDecoder.stash += 'x'",
        "a, json.stash = 1, 2",
        "for json.stash in [1]: pass",
    ],
)
def test_attributes_of_shared_modules_and_classes_cannot_be_set(line):
    found = messages(design_with(line))
    assert any("attribute" in m and "keep state in the memory dict" in m for m in found), found


def test_a_class_of_the_design_may_set_its_own_attributes_but_self_cannot_be_rebound():
    own = OK + "\n\nclass Box:\n    def put(self):\n        self.items = []\n"
    assert check_design(own) == []
    rebound = OK + "\n\nclass Box:\n    def put(self):\n        self = json.JSONDecoder\n        self.x = 1\n"
    assert any("'self' cannot be assigned" in m for m in messages(rebound))


@pytest.mark.parametrize(
    "line",
    [
        'x = ("{0." + "_" * 2 + "class" + "_" * 2 + "}").format(tools)',
        "fmt = task['goal']; x = fmt.format(tools)",
        "x = str.format('{0}', 1)",
        "import string; x = string.Formatter().vformat('{0}', [tools], {})",
    ],
)
def test_format_strings_built_at_run_time_are_refused(line):
    """A format field reads attributes; only a literal format string is checked."""
    assert any("only allowed on a string literal" in m for m in messages(design_with(line)))


def test_a_literal_format_string_is_fine():
    assert check_design(design_with("x = 'Go to {0}.'.format(task['goal'])")) == []


def test_a_remembered_check_hands_out_its_own_list_each_time():
    """The check remembers sources it parsed (the screening checks one candidate many times): what a
    caller does with the list it got never changes what the next caller gets."""
    bad = design_with("x = open('f')")
    first = check_design(bad)
    assert first and first == check_design(bad)
    first.clear()
    assert check_design(bad) and check_design(bad) is not check_design(bad)
