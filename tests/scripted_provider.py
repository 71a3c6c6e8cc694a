"""The test plug-in: registers the ``scripted:FILE`` model provider through the documented hook
(``atlas.infra.llm.providers.register_provider``), so ``--model scripted:FILE`` works in CLI tests
(tests/conftest.py imports this module) and in subprocesses (``subprocess_env()`` names it in
``$ATLAS_PLUGINS``), running the real pipeline without a model.

``scripted:FILE`` builds a ``ScriptedLLM`` from a JSON file. FILE holds either a list of replies
(used in order) or ``{"stages": {"segmentation": [...], "tips": [...], ...}, "default": "..."}``:
replies are routed by the stage of the prompt (``prompts.stage_of``); the last reply of a
stage repeats once its list is used up; a file with no reply for the ``generalize`` stage gets the
descriptions back unchanged (the rule pass still strips entities)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM
from atlas.infra.llm.providers import register_provider
from atlas.memory.guidelines.prompts import stage_of

TESTS_DIR = Path(__file__).resolve().parent


def _reply_text(reply: Any) -> Any:
    return reply if isinstance(reply, str | dict) else json.dumps(reply)


def scripted_from_file(path: str | Path) -> Any:
    """A ScriptedLLM from a replies file (format in the module docstring)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read scripted replies from {p}: {exc}") from exc
    if isinstance(data, list):
        return ScriptedLLM([r if isinstance(r, str) else json.dumps(r) for r in data])
    if not isinstance(data, dict) or not isinstance(data.get("stages", {}), dict):
        raise ConfigError(f"{p}: expected a list of replies or {{'stages': {{...}}, 'default': ...}}")
    stages = {k: list(v if isinstance(v, list) else [v]) for k, v in data.get("stages", {}).items()}
    default = data.get("default")
    used: dict[str, int] = {}

    def respond(messages: list[dict[str, Any]], **_: Any) -> str:
        stage = stage_of(messages) or "default"
        replies = stages.get(stage)
        if not replies and stage == "generalize" and default is None:
            items = re.findall(r"^\d+\. (.+)$", messages[-1]["content"], re.M)
            return json.dumps({"descriptions": items})
        if not replies:
            if default is None:
                raise ConfigError(f"{p}: no scripted reply for stage {stage!r}")
            return default if isinstance(default, str) else json.dumps(default)
        i = used.get(stage, 0)
        used[stage] = i + 1
        r = replies[min(i, len(replies) - 1)]
        return r if isinstance(r, str) else json.dumps(r)

    return ScriptedLLM(respond)


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a subprocess that should know ``scripted:``: this module in
    ``$ATLAS_PLUGINS`` and the tests folder on ``PYTHONPATH``."""
    env = {**os.environ, **extra}
    env["ATLAS_PLUGINS"] = ",".join(filter(None, [env.get("ATLAS_PLUGINS"), __name__]))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS_DIR), env.get("PYTHONPATH")]))
    return env


register_provider("scripted", scripted_from_file)
