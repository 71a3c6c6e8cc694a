"""The README and the guides under docs/ run as written: their Python examples run, the README's
search quick start runs (with a scripted model and fewer tasks), every other command in its shell
blocks parses with the CLI or names what exists; docs/cli.md matches the commands' --help; the README
stays short and the product's text says what the software does, not how it was worked on."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripted_provider import subprocess_env

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(doc: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", doc.read_text(), flags=re.S)


def _python_blocks() -> list[tuple[str, int, str]]:
    # Blocks that only show a signature (`...` bodies) or need API keys say so and are not run.
    out = []
    for doc in GUIDES:
        runnable = [b for b in _blocks(doc, "python") if "not run:" not in b and ": ..." not in b]
        out += [(doc.relative_to(ROOT).as_posix(), i, b) for i, b in enumerate(runnable)]
    return out


@pytest.mark.parametrize(("doc", "index", "code"), _python_blocks(), ids=lambda v: str(v)[:40])
def test_python_example_runs(doc: str, index: int, code: str, tmp_path, monkeypatch) -> None:
    (tmp_path / "docs").symlink_to(ROOT / "docs")  # examples may read the committed results
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{doc}[python block {index}]", "exec"), {"__name__": "__doc_example__"})


def test_the_readme_is_short_and_starts_with_what_atlas_is() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 300
    heads = [ln for ln in lines if ln.startswith("## ")]
    assert heads[0] == "## Set up" and heads[-1] == "## Documentation"
    assert [h for h in heads if h.startswith("## Quick start")] == [
        "## Quick start: the memory library, from Python",
        "## Quick start: a search",
        "## Quick start: serve a found design",
        "## Quick start: coding agents",
    ]
    assert sum(1 for ln in lines if ln.startswith("| ") and "[95% CI]" in ln) == 1  # one results table


def test_readme_has_exactly_two_setup_commands() -> None:
    setup = README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^make (\w+)", setup, flags=re.M)
    assert commands == ["demo", "test"]


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (ROOT / ".ci" / "run").read_text()


# ---- shell blocks ---------------------------------------------------------------------------------


def _shell_lines() -> list[str]:
    lines = []
    for block in _blocks(README, "bash"):
        for ln in block.splitlines():
            ln = re.sub(r"\s+#.*$", "", ln).strip()
            if ln:
                lines.append(ln)
    return lines


def _makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), flags=re.M))


def _parse_atlas(words: list[str]) -> None:
    """Parse an `atlas` command line as the CLI would, without running it."""
    import click
    import typer

    from atlas.cli import app

    group = typer.main.get_command(app)
    ctx = group.make_context("atlas", list(words))
    cmd: click.Command = group
    while isinstance(cmd, click.Group):
        name, sub, rest = cmd.resolve_command(ctx, ctx.protected_args + ctx.args)
        assert sub is not None, words
        ctx = sub.make_context(name, rest, parent=ctx)
        cmd = sub


@pytest.mark.parametrize("line", _shell_lines())
def test_every_readme_command_names_what_exists(line: str) -> None:
    words = shlex.split(line)
    if words[0] == "make":
        assert set(words[1:]) <= _makefile_targets(), line
    elif words[0] == "atlas":
        _parse_atlas(words[1:])
    elif words[0] == "claude":
        plugin = ROOT / words[words.index("--plugin-dir") + 1]
        assert (plugin / ".claude-plugin" / "plugin.json").is_file(), line
    else:
        pytest.fail(f"the README runs {words[0]!r}: teach this test to check it")


SMALL = ["--rooms", "5", "--episodes", "1", "--deploy-seeds", "2"]  # fewer, smaller tasks than as written


def _atlas(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "atlas.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="200"),
        timeout=600,
        **kw,
    )


def _serves(args: list[str], cwd: Path) -> str:
    """Start a server command, wait for the address it prints, stop it; return what it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "atlas.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=subprocess_env(COLUMNS="200"),
    )
    seen = ""
    try:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        deadline = time.monotonic() + 120
        while "http://127.0.0.1:" not in seen and time.monotonic() < deadline and proc.poll() is None:
            try:
                seen += os.read(fd, 65536).decode(errors="replace")
            except BlockingIOError:
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return seen


def test_the_search_quick_start_runs(tmp_path: Path) -> None:
    """The README's search block, in order, with a scripted model and small tasks: a run, its viewer,
    the export of its best design, that design on a fresh seed, and the headroom."""
    block = next(b for b in _blocks(README, "bash") if b.lstrip().startswith("atlas run"))
    lines = [shlex.split(re.sub(r"\s+#.*$", "", ln)) for ln in block.splitlines() if ln.strip()]
    assert [ln[1] for ln in lines] == ["run", "view", "archive", "eval", "headroom"]
    (tmp_path / "replies.json").write_text(json.dumps({"default": "look"}))
    model = ["--model", "scripted:replies.json"]
    extra = {"run": [*model, *SMALL, "--iterations", "1"], "eval": [*model, *SMALL], "archive": []}
    extra["headroom"] = [*model, "--rooms", "5", "--tasks", "2"]
    for words in lines:
        if words[1] == "view":
            assert "http://127.0.0.1:" in _serves(words[1:], tmp_path)
            continue
        res = _atlas(words[1:] + extra[words[1]], tmp_path)
        assert res.returncode == 0, f"{' '.join(words)}\n{res.stdout}\n{res.stderr}"
    assert (tmp_path / "found" / "design.py").is_file()


def test_the_serve_quick_start_exports_the_committed_design(tmp_path: Path) -> None:
    block = next(b for b in _blocks(README, "bash") if "atlas mcp --design" in b)
    export = shlex.split(next(ln for ln in block.splitlines() if ln.startswith("atlas archive export")))
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    res = _atlas(export[1:], tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "found" / "advice.jsonl").read_text().strip()


# ---- the rest ---------------------------------------------------------------------------------------

# the phrases of a round of work, with \s for each space so that a grep for them skips this file
HISTORY = re.compile(
    r"session\s[0-9]|sessions\s[0-9]|this\ssession|today's\scode|stopped\sby\shand|the\sissue's|hidden\scheck"
    r"|issue\s#?[0-9]",
    re.I,
)


def test_the_product_text_says_what_it_does_not_how_it_was_worked_on() -> None:
    files = [README, *(ROOT / "docs").rglob("*"), *(ROOT / "src").rglob("*"), *(ROOT / "tests").rglob("*.py")]
    files += [*(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")]
    hits = []
    for f in files:
        if f.is_file() and f.suffix in (".md", ".py", ".txt", ".json", ".toml", ".html", ".js", ".css"):
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                if HISTORY.search(line):
                    hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)


def test_cli_reference_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_cli_docs.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_view_and_mcp_do_not_share_a_default_port():
    """`atlas view` and `atlas mcp --transport streamable-http` run side by side."""
    import inspect

    from atlas.cli.view import VIEW_PORT
    from atlas.mcp_server import serve
    from atlas.viewer.server import VIEW_PORT as SERVER_PORT

    assert VIEW_PORT == SERVER_PORT != inspect.signature(serve).parameters["port"].default


def test_every_command_lists_with_its_first_paragraph_on_one_line() -> None:
    """The command lists of `atlas --help` and each group rewrap a summary to the terminal; a docstring's
    line breaks kept there gave ragged lines at 80 columns."""
    import inspect

    from atlas.cli import app

    def commands(group):
        yield from group.registered_commands
        for sub in group.registered_groups:
            yield from commands(sub.typer_instance)

    listed = list(commands(app))
    assert len(listed) > 20
    for info in listed:
        doc = info.help or inspect.getdoc(info.callback)
        assert info.short_help == " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()), info.name
