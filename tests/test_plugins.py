"""The plug-in door: ``register_provider`` reaches ``make_llm`` (and so every ``--model``), plug-in
modules load from ``$ATLAS_PLUGINS``, and no test machinery lives in the product."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM, make_llm
from atlas.infra.llm.providers import provider_for, register_provider
from atlas.infra.plugins import load_plugins

SRC = Path(__file__).resolve().parents[1] / "src" / "atlas"


def test_a_registered_provider_builds_the_client():
    register_provider("echo-test", lambda rest: ScriptedLLM(lambda messages, **kw: rest.upper()))
    llm = make_llm("echo-test:hello")
    assert llm.complete([{"role": "user", "content": "hi"}]).text == "HELLO"
    assert provider_for("openai/gpt-4.1-mini") is None and provider_for("local:qwen2.5-coder-0.5b") is None
    with pytest.raises(ConfigError):
        register_provider("local", lambda rest: None)


def test_plugin_modules_load_from_the_environment_variable(tmp_path, monkeypatch):
    (tmp_path / "my_atlas_plugin.py").write_text(
        "from atlas.infra.llm import ScriptedLLM\n"
        "from atlas.infra.llm.providers import register_provider\n"
        "register_provider('myplug', lambda rest: ScriptedLLM(['from the plug-in']))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ATLAS_PLUGINS", "my_atlas_plugin")
    assert make_llm("myplug:x").complete([{"role": "user", "content": "?"}]).text == "from the plug-in"
    monkeypatch.setenv("ATLAS_PLUGINS", "no_such_atlas_plugin_module")
    with pytest.raises(ConfigError, match="no_such_atlas_plugin_module"):
        load_plugins()


def test_the_cli_finds_a_plugin_provider_in_a_subprocess(tmp_path):
    from scripted_provider import subprocess_env

    replies = tmp_path / "replies.json"
    replies.write_text('{"default": "{}"}')
    code = (
        "from atlas.infra.llm import make_llm; import sys; "
        "print(make_llm(sys.argv[1]).complete([{'role': 'user', 'content': 'x'}]).text)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, f"scripted:{replies}"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "{}", proc.stderr[-2000:]


def test_no_test_machinery_in_the_product():
    """Test doubles are injected through the provider hook or constructors: no ``scripted:`` model
    strings, stage markers or special cases for the double's name in src/ (the double's own module
    excepted)."""
    offenders = []
    for path in SRC.rglob("*.py"):
        if path == SRC / "infra" / "llm" / "scripted.py":
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in (r"scripted:", r"\[atlas-guidelines:", r"==\s*\"scripted\"", r"auto_responder"):
            if re.search(pattern, text):
                offenders.append(f"{path.relative_to(SRC)}: {pattern}")
    assert offenders == []


def test_a_broken_plugin_costs_a_warning_never_the_command(tmp_path):
    """A plug-in that raises on import and one that is missing, listed around a
    working one: `atlas --help` and the working plug-in still work, and both failures are named."""
    from scripted_provider import subprocess_env

    (tmp_path / "raising_atlas_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "good_atlas_plugin.py").write_text(
        "from atlas.infra.llm import ScriptedLLM\n"
        "from atlas.infra.llm.providers import register_provider\n"
        "register_provider('goodplug', lambda rest: ScriptedLLM(['good']))\n"
    )
    env = subprocess_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env.get('PYTHONPATH', '')}"
    env["ATLAS_PLUGINS"] = "raising_atlas_plugin,good_atlas_plugin,missing_atlas_plugin"
    help_ = subprocess.run(
        [sys.executable, "-m", "atlas.cli", "--help"], capture_output=True, text=True, env=env, timeout=120
    )
    assert help_.returncode == 0 and "Traceback" not in help_.stderr, help_.stderr[-2000:]
    assert "raising_atlas_plugin" in help_.stderr and "boom at import" in help_.stderr
    assert "missing_atlas_plugin" in help_.stderr and "warning:" in help_.stderr
    code = (
        "from atlas.errors import ConfigError\n"
        "from atlas.infra.plugins import load_plugins\n"
        "try:\n    load_plugins()\nexcept ConfigError as exc:\n    print('ERR', exc)\n"
        "from atlas.infra.llm.providers import provider_for\n"
        "print('GOOD', provider_for('goodplug:x') is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "GOOD True" in out.stdout and "missing_atlas_plugin" in out.stdout, out.stdout + out.stderr


GOOD_PLUGIN = (
    "from atlas.infra.llm import ScriptedLLM\n"
    "from atlas.infra.llm.providers import register_provider\n"
    "register_provider('goodplug', lambda rest: ScriptedLLM(['good'] * 3))\n"
)


def test_a_missing_plugin_listed_after_a_working_one_is_named_once_and_the_working_one_serves(tmp_path):
    """Neither ignored nor in the way: the working plug-in's provider builds its client, the missing
    module is named in one warning line (once however often the registries look), and a name no
    loaded plug-in registered is an error that names the plug-in that failed."""
    from scripted_provider import subprocess_env

    (tmp_path / "good_atlas_plugin.py").write_text(GOOD_PLUGIN)
    env = subprocess_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env.get('PYTHONPATH', '')}"
    env["ATLAS_PLUGINS"] = "good_atlas_plugin,missing_atlas_plugin"
    code = (
        "from atlas.infra.llm import make_llm\n"
        "from atlas.envs.registry import get_env\n"
        "from atlas.errors import ConfigError\n"
        "for _ in range(2):\n"
        "    print('GOOD', make_llm('goodplug:x').complete([{'role': 'user', 'content': '?'}]).text)\n"
        "for call in (lambda: make_llm('otherplug:x'), lambda: get_env('plugin_world')):\n"
        "    try:\n        call()\n    except ConfigError as exc:\n        print('ERR', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("GOOD good") == 2
    errors = [x for x in out.stdout.splitlines() if x.startswith("ERR")]
    assert len(errors) == 2 and all("missing_atlas_plugin" in x for x in errors), out.stdout
    assert "'otherplug'" in errors[0] and "'plugin_world'" in errors[1]
    warned = [x for x in out.stderr.splitlines() if "missing_atlas_plugin" in x]
    assert len(warned) == 1 and "plug-in not loaded" in warned[0] and "Traceback" not in out.stderr
    cli = subprocess.run(
        [sys.executable, "-m", "atlas.cli", "run", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert cli.returncode == 0
    assert [x for x in cli.stderr.splitlines() if "missing_atlas_plugin" in x] == [
        "warning: plug-in not loaded: ATLAS_PLUGINS names 'missing_atlas_plugin', which cannot be imported "
        "(ModuleNotFoundError: No module named 'missing_atlas_plugin'); fix it, or remove it from $ATLAS_PLUGINS"
    ]


def _no_gateway(rest: str) -> ScriptedLLM:
    raise RuntimeError(f"no gateway configured for {rest}")


def _invoke_with_a_failing_provider(tmp_path, command: str, *extra: str):
    """``atlas <command>`` with a provider whose factory raises, and ``extra`` options."""
    from typer.testing import CliRunner

    from atlas.cli import app

    register_provider("nogateway", _no_gateway)
    args = {
        "headroom": ["headroom", "--tasks", "1", "--conditions", "none"],
        "run": ["run", "--run-dir", str(tmp_path / "r"), "--quiet"],
        "eval": ["eval", "no_memory", "--run-dir", str(tmp_path / "r")],
    }[command]
    res = CliRunner().invoke(app, [*args, *extra, "--model", "nogateway:x"], env={"COLUMNS": "200"})
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("error:")]
    return res, line


@pytest.mark.parametrize("command", ["headroom", "run", "eval"])
def test_a_provider_whose_factory_raises_is_one_line_naming_it(tmp_path, command):
    res, line = _invoke_with_a_failing_provider(tmp_path, command)
    assert "'nogateway'" in line and "no gateway configured for x" in line and __name__ in line
    assert "Traceback" not in res.output


@pytest.mark.parametrize("command", ["headroom", "run", "eval"])
def test_an_unknown_environment_is_refused_before_a_model_is_made(tmp_path, command):
    """The registry's message (known names, how a plug-in registers), before any model or game: the
    provider named here would raise if it were asked for a client."""
    res, line = _invoke_with_a_failing_provider(tmp_path, command, "--env", "nosuchenv")
    assert "unknown environment 'nosuchenv'" in line and "graphworld" in line and "ATLAS_PLUGINS" in line
    assert "no gateway" not in res.output and not (tmp_path / "r").exists()


def test_a_plugin_environment_is_listed_in_the_env_option_s_help():
    from scripted_provider import subprocess_env

    env = subprocess_env()
    env["PYTHONPATH"] = f"{Path(__file__).parent / 'envs'}:{env.get('PYTHONPATH', '')}"
    env["ATLAS_PLUGINS"] = "toy_env"
    help_ = subprocess.run(
        [sys.executable, "-m", "atlas.cli", "run", "--help"],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "200"},
        timeout=120,
    )
    assert help_.returncode == 0, help_.stderr[-2000:]
    line = next(x for x in help_.stdout.splitlines() if "--env " in x)
    assert "graphworld" in line and "| toy_line" in line, line
