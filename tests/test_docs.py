"""The README's Python examples run as written, and docs/cli.md matches the commands' --help."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _python_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    # Blocks that only show a signature (`...` bodies) or need API keys say so and are not run.
    return [b for b in blocks if "not run:" not in b and ": ..." not in b]


@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_readme_example_runs(index: int, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = _python_blocks()[index]
    exec(compile(code, f"README.md[python block {index}]", "exec"), {"__name__": "__readme__"})


def test_readme_has_exactly_two_setup_commands() -> None:
    setup = README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^make (\w+)", setup, flags=re.M)
    assert commands == ["demo", "test"]


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_cli_reference_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_cli_docs.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_view_and_mcp_do_not_share_a_default_port():
    """Issue 29, item 13: `atlas view` and `atlas mcp --transport streamable-http` run side by side."""
    import inspect

    from atlas.cli.view import VIEW_PORT
    from atlas.mcp_server import serve
    from atlas.viewer.server import VIEW_PORT as SERVER_PORT

    assert VIEW_PORT == SERVER_PORT != inspect.signature(serve).parameters["port"].default
