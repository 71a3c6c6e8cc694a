"""docs/results/README.md says what the committed run folders hold: its paired figures are what
``scripts/paired_vs.py`` prints from them, its commands parse with the current CLI, its links and
the old folder names resolve, and the folders stay light and exportable. The only tests that open
docs/results/ (the others read tests/fixtures/)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import runpy
import shlex
import sys
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from atlas.alma.deploy.export import load_export
from atlas.cli import app

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
DOC = RESULTS / "README.md"


def _commands(prefix: str) -> list[str]:
    """The lines of the doc's bash blocks that run ``prefix`` (after any VAR=value assignments)."""
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(), flags=re.S)
    lines = [ln.strip() for b in blocks for ln in b.splitlines() if ln.strip()]
    return [ln for ln in lines if re.sub(r"^(\w+=\S+\s+)*", "", ln).startswith(prefix)]


def _paired_vs(args: list[str]) -> str:
    out = io.StringIO()
    argv, sys.argv = sys.argv, ["paired_vs.py", *args]
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(ROOT / "scripts" / "paired_vs.py"), run_name="__main__")
    finally:
        sys.argv = argv
    return out.getvalue()


def _figure(line: str) -> str:
    """``+0.195 [+0.017, +0.371]`` from a paired_vs line, in the doc's minus sign where it has one."""
    m = re.search(r"([+-]\d\.\d{3}) \[([+-]\d\.\d{3}), ([+-]\d\.\d{3})\]", line)
    assert m, line
    return "{} [{}, {}]".format(*m.groups())


def _in_doc(figure: str, text: str) -> bool:
    text = " ".join(text.split())  # a figure may wrap at the end of a line
    return figure in text or figure.replace("-", "−") in text


PAIRED = _commands("python scripts/paired_vs.py")


def test_the_doc_has_paired_figures_to_check():
    assert len(PAIRED) >= 6


def _unpacked(args: list[str], into: Path) -> list[str]:
    """``args`` with each ``/tmp/NAME`` the doc unpacks from ``history/NAME.tar.xz`` unpacked into ``into``."""
    out = []
    for arg in args:
        name = arg.removeprefix("/tmp/").split("/")[0]
        packed = RESULTS / "history" / f"{name}.tar.xz"
        if arg.startswith("/tmp/") and packed.exists():
            if not (into / name).exists():
                with tarfile.open(packed) as tar:
                    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python < 3.11.4
                    tar.extractall(into, **safe)
            arg = str(into / arg.removeprefix("/tmp/"))
        out.append(arg)
    return out


@pytest.mark.parametrize("command", PAIRED)
def test_each_paired_figure_is_what_the_committed_folder_gives(command: str, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    args = _unpacked(shlex.split(command)[2:], tmp_path)
    out = _paired_vs(args)
    rows = out.splitlines()
    assert rows, out
    # the row the doc leads with: against no memory in a run, the first design of another folder
    row = rows[0] if "--against" in args else next(r for r in rows if " no_memory " in r)
    assert _in_doc(_figure(row), DOC.read_text()), f"{command}: {row} is not in docs/results/README.md"


def _resolve(group, args: list[str]) -> None:
    """Parse ``args`` as the CLI would, without running the command (types, ranges, choices)."""
    import click

    ctx = group.make_context("atlas", list(args), resilient_parsing=False)
    cmd: click.Command = group
    while isinstance(cmd, click.Group):
        name, sub, rest = cmd.resolve_command(ctx, ctx.protected_args + ctx.args)
        assert sub is not None, args
        ctx = sub.make_context(name, rest, parent=ctx)
        cmd = sub


@pytest.mark.parametrize("command", _commands("atlas "))
def test_each_atlas_command_in_the_doc_parses(command: str, monkeypatch):
    import typer

    words = shlex.split(command)
    while "=" in words[0]:
        name, value = words.pop(0).split("=", 1)
        monkeypatch.setenv(name, value)
    assert words[0] == "atlas"
    _resolve(typer.main.get_command(app), words[1:])


def test_every_folder_the_docs_link_exists():
    for doc in (DOC, ROOT / "README.md"):
        text = doc.read_text()
        for target in re.findall(r"\]\(((?:docs/results/)?[\w.-]+(?:/[\w.-]*)*)\)", text):
            if target.startswith(("http", "#")) or not (doc == DOC or target.startswith("docs/results/")):
                continue
            path = (doc.parent / target) if doc == DOC else ROOT / target
            assert path.exists(), f"{doc.name} links {target}, which does not exist"


def test_old_folder_names_map_to_folders_that_exist():
    renamed = json.loads((RESULTS / "renamed.json").read_text())
    assert renamed
    for old, new in renamed.items():
        assert not (RESULTS / old).exists(), old
        assert (RESULTS / new).exists(), f"{old} -> {new}"
        assert not re.search(r"-s\d+\b", new), new


def test_no_folder_is_named_after_a_round_of_work():
    names = [p.name for p in RESULTS.iterdir()] + [p.name for p in (RESULTS / "history").iterdir()]
    assert not [n for n in names if re.search(r"-s\d+(\b|-|\.)", n)]


def test_the_results_stay_light():
    size = sum(p.stat().st_size for p in RESULTS.rglob("*") if p.is_file())
    assert size <= 10 * 1024 * 1024, f"docs/results holds {size / 1e6:.1f} MB"


def test_each_packed_log_opens_with_the_logs_of_every_design():
    packs = sorted(RESULTS.glob("*/raw.tar.xz"))
    assert packs
    for pack in packs:
        with tarfile.open(pack) as tar:
            names = tar.getnames()
        archive = json.loads((pack.parent / "archive.json").read_text())
        played = {e["id"] for e in archive["entries"] if e.get("per_task")}
        assert {f"logs/{i}" for i in played} <= set(names), pack


SEARCHES = sorted(p.parent.name for p in RESULTS.glob("*/logs"))


@pytest.mark.parametrize("run", SEARCHES)
def test_committed_searches_export_their_best_design_with_its_learned_memory(run, tmp_path):
    res = CliRunner().invoke(
        app,
        ["archive", "export", str(RESULTS / run), "--best", "--out", str(tmp_path / "e")],
        env={"COLUMNS": "300"},
    )
    assert res.exit_code == 0, res.output
    exp = load_export(tmp_path / "e")
    # runs recorded before designs saw the observation text have no observation_text, nor the listed actions
    shapes = [
        {"goal", "observation", "domain"},
        {"goal", "observation", "observation_text", "domain"},
        {"goal", "observation", "observation_text", "actions", "domain"},
    ]
    assert exp.advice and all(set(a["task"]) in shapes for a in exp.advice)
